from django import forms

from .models import PlanMode
from .services.lifecycle import REQUESTABLE_MODES


class ApproveForm(forms.Form):
    reason = forms.CharField(required=False, max_length=2000)
    confirm_data_loss = forms.BooleanField(required=False)


class RejectForm(forms.Form):
    reason = forms.CharField(max_length=2000, strip=True)


class CancelForm(forms.Form):
    reason = forms.CharField(required=False, max_length=2000)


class RollbackForm(forms.Form):
    reason = forms.CharField(required=False, max_length=2000)


class RequestPlanForm(forms.Form):
    cluster = forms.SlugField(max_length=100)
    mode = forms.ChoiceField(
        choices=[(m.value, m.label) for m in PlanMode if m in REQUESTABLE_MODES]
    )
    brokers = forms.CharField(
        required=False, max_length=500, help_text="Comma-separated ids (add / remove brokers)."
    )
    reason = forms.CharField(required=False, max_length=2000)
    allow_data_loss = forms.BooleanField(required=False)

    def clean_brokers(self) -> list[int]:
        text = self.cleaned_data.get("brokers", "")
        try:
            return [int(part) for part in text.replace(" ", "").split(",") if part]
        except ValueError as exc:
            raise forms.ValidationError("use comma-separated broker ids, e.g. 4,5") from exc
