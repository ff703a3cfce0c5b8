"""The cluster form, shared by the Django admin and the dashboard: connection settings
with write-only secrets (never rendered back; blank keeps the stored value, or the one
entered earlier in the same editing session that the caller passes as `entered_secrets`)."""

from typing import Any

from django import forms

from apps.core.secret_fields import encrypted_is_set

from .editing import SECRET_FIELDS
from .models import Cluster

CLUSTER_FORM_FIELDS = (
    "name",
    "bootstrap_servers",
    "security_protocol",
    "sasl_mechanism",
    "sasl_username",
    "sasl_password",
    "ssl_ca_pem",
    "ssl_certificate_pem",
    "ssl_key_pem",
    "ssl_verify_hostname",
)


class _WriteOnlyTextarea(forms.Textarea):
    def format_value(self, value: Any) -> None:
        return None


class ClusterForm(forms.ModelForm):
    sasl_password = forms.CharField(
        label="SASL password",
        required=False,
        strip=False,
        widget=forms.PasswordInput(render_value=False),
    )
    forget_sasl_password = forms.BooleanField(label="Forget the stored password", required=False)
    ssl_key_pem = forms.CharField(
        label="Client private key (PEM)", required=False, widget=_WriteOnlyTextarea
    )
    forget_ssl_key_pem = forms.BooleanField(label="Forget the stored key", required=False)

    class Meta:
        model = Cluster
        fields = CLUSTER_FORM_FIELDS

    def __init__(
        self, *args: Any, entered_secrets: dict[str, str] | None = None, **kwargs: Any
    ) -> None:
        super().__init__(*args, **kwargs)
        # Secrets typed on an earlier submit of this form (Test connection), not stored
        # yet: a blank field uses them.
        self.entered_secrets_before = {
            k: v for k, v in (entered_secrets or {}).items() if k in SECRET_FIELDS and v
        }
        # Names which secrets the submitted form replaces or forgets.
        self.secrets_changed: list[str] = []
        # The secrets this submit carries that are not stored yet (typed now or earlier).
        self.secrets_entered: dict[str, str] = {}
        for name in SECRET_FIELDS:
            self.initial[name] = ""  # never sent to the page, and blank is "unchanged"
        self._help_texts_set(kept=set(self.entered_secrets_before))

    def _help_texts_set(self, *, kept: set[str]) -> None:
        for name in SECRET_FIELDS:
            if name in kept:
                help_text = (
                    "The one entered before is kept for Save (not shown); leave empty to use it."
                )
            elif self.instance.pk and encrypted_is_set(self.instance, name):
                help_text = "One is stored (encrypted); leave empty to keep it."
            else:
                help_text = "Stored encrypted."
            # A bound field copies its field's help text when first made.
            self.fields[name].help_text = self[name].help_text = help_text

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # What to store: a new value (typed now or before), nothing (forget), or what is
        # stored, still encrypted.
        for name in SECRET_FIELDS:
            if data.get(f"forget_{name}"):
                data[name] = ""
            elif data.get(name):
                self.secrets_entered[name] = data[name]
            elif name in self.entered_secrets_before:
                data[name] = self.secrets_entered[name] = self.entered_secrets_before[name]
            else:
                data[name] = self.instance.__dict__.get(name) or ""
                continue
            self.secrets_changed.append(name)
        # The page shown again after this submit keeps what was entered.
        self._help_texts_set(kept=set(self.secrets_entered))
        return data
