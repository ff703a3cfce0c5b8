from django import forms

from apps.audit.forms import AuditFilterForm


class AuditExploreForm(AuditFilterForm):
    """The audit trail's filters plus the cluster the events are about."""

    cluster = forms.SlugField(required=False, max_length=100)

    field_order = ["cluster", "actor", "action", "since", "until"]
