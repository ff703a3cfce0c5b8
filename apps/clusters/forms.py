"""The cluster form, shared by the Django admin and the dashboard: connection settings
with write-only secrets (never rendered back; blank keeps the stored value)."""

from typing import Any

from django import forms

from .editing import SECRET_FIELDS
from .fields import encrypted_is_set
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

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Names which secrets the submitted form replaces or forgets.
        self.secrets_changed: list[str] = []
        for name in SECRET_FIELDS:
            self.initial[name] = ""  # never sent to the page, and blank is "unchanged"
            stored = self.instance.pk and encrypted_is_set(self.instance, name)
            self.fields[name].help_text = (
                "One is stored (encrypted); leave empty to keep it."
                if stored
                else "Stored encrypted."
            )

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        # What to store: a new value, nothing (forget), or what is stored, still encrypted.
        for name in SECRET_FIELDS:
            if data.get(f"forget_{name}"):
                data[name] = ""
            elif data.get(name):
                pass
            else:
                data[name] = self.instance.__dict__.get(name) or ""
                continue
            self.secrets_changed.append(name)
        return data
