"""The cluster policy as a form: lists and maps as plain fields (checkboxes, one
pattern per line, "goal = value" lines), not raw JSON."""

from typing import Any

from django import forms

from apps.balancer import engine

from .models import ClusterPolicy
from .services import POLICY_FIELDS

_SCALARS = tuple(
    f
    for f in POLICY_FIELDS
    if f not in {"goals", "goal_thresholds", "topics_include", "topics_exclude", "excluded_brokers"}
)


def _lines(value: str) -> list[str]:
    return [line.strip() for line in value.replace(",", "\n").splitlines() if line.strip()]


class PolicyForm(forms.ModelForm):
    goals = forms.MultipleChoiceField(
        choices=[(g, g) for g in engine.SOFT_GOALS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Soft goals the balancer pursues; none ticked: every soft goal. Hard goals "
        "always apply. Ticked goals keep their stored priority; new ones come after.",
    )
    goal_thresholds = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Per-goal override of the balance threshold, one per line: "
        "leader-distribution = 1.2",
    )
    topics_include = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text='Topic name patterns (e.g. "orders-*"), one per line. Empty: every topic.',
    )
    topics_exclude = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="Topic name patterns the balancer never touches, one per line.",
    )
    excluded_brokers = forms.CharField(
        required=False,
        help_text="Broker ids the balancer leaves alone, comma-separated (e.g. 4, 7).",
    )

    class Meta:
        model = ClusterPolicy
        fields = _SCALARS

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        policy = self.instance
        self.initial.update(
            goals=list(policy.goals),
            goal_thresholds="\n".join(f"{g} = {v}" for g, v in policy.goal_thresholds.items()),
            topics_include="\n".join(policy.topics_include),
            topics_exclude="\n".join(policy.topics_exclude),
            excluded_brokers=", ".join(str(b) for b in policy.excluded_brokers),
        )

    def clean_goals(self) -> list[str]:
        # Checkboxes have no order: keep the stored priority of goals still ticked.
        ticked = self.cleaned_data["goals"]
        kept = [g for g in self.instance.goals if g in ticked]
        return kept + [g for g in ticked if g not in kept]

    def clean_goal_thresholds(self) -> dict[str, float]:
        thresholds = {}
        for line in self.cleaned_data["goal_thresholds"].splitlines():
            if not line.strip():
                continue
            goal, sep, value = line.partition("=")
            try:
                thresholds[goal.strip()] = float(value)
            except ValueError:
                raise forms.ValidationError(
                    f'"{line.strip()}": write goal = number, e.g. leader-distribution = 1.2'
                ) from None
            if not sep:
                raise forms.ValidationError(f'"{line.strip()}": write goal = number')
        return thresholds

    def clean_topics_include(self) -> list[str]:
        return _lines(self.cleaned_data["topics_include"])

    def clean_topics_exclude(self) -> list[str]:
        return _lines(self.cleaned_data["topics_exclude"])

    def clean_excluded_brokers(self) -> list[int]:
        try:
            return [int(b) for b in _lines(self.cleaned_data["excluded_brokers"])]
        except ValueError:
            raise forms.ValidationError("Broker ids are whole numbers, e.g. 4, 7.") from None

    def changes(self) -> dict[str, Any]:
        """Every policy field as the form says (policy_update keeps what is unchanged)."""
        return {f: self.cleaned_data[f] for f in POLICY_FIELDS if f in self.cleaned_data}
