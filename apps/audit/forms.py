from django import forms

from .models import ActorKind


class AuditFilterForm(forms.Form):
    actor = forms.CharField(required=False, max_length=255)
    actor_kind = forms.ChoiceField(required=False, choices=[("", "any")] + list(ActorKind.choices))
    action = forms.CharField(required=False, max_length=100, help_text="prefix, e.g. plan.")
    object_type = forms.CharField(required=False, max_length=100)
    object_id = forms.CharField(required=False, max_length=100)
    since = forms.DateTimeField(required=False, help_text="ISO date or date-time (UTC)")
    until = forms.DateTimeField(required=False)
