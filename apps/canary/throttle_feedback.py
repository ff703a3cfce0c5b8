"""What a canary round says to the adaptive throttle of running executions."""

from __future__ import annotations

from apps.clusters.models import Cluster
from apps.plans.services.throttle_auto import ThrottleVerdict, executions_throttle_adapt

from .band_updates import BrokerJudgement


def canary_verdict(*, judged: list[BrokerJudgement]) -> ThrottleVerdict | None:
    """Met when every broker measured acknowledged every write within the top of its
    band; the worst broker says why not. None when no broker was measured, or none has
    a band yet."""
    if not judged:
        return None
    failing = [j for j in judged if j.acked < j.sent]
    if failing:
        j = max(failing, key=lambda j: (j.sent - j.acked, -j.broker_id))
        return ThrottleVerdict(
            met=False,
            reason=f"broker {j.broker_id}: {j.sent - j.acked} of {j.sent} canary writes failed",
            urgent=True,
        )

    def share(j: BrokerJudgement) -> tuple[float, int]:
        return ((j.p99_ms or 0.0) / (j.top_ms or float("inf")), -j.broker_id)

    slow = [j for j in judged if not j.within]
    if slow:
        j = max(slow, key=share)
        return ThrottleVerdict(
            met=False, reason=f"broker {j.broker_id} p99 {j.p99_ms:.0f} ms > {j.top_ms:.0f} ms"
        )
    banded = [j for j in judged if j.top_ms is not None]
    if not banded:
        return None  # every broker's first round: nothing to judge by yet
    worst = max(banded, key=share)
    return ThrottleVerdict(
        met=True,
        reason=f"every broker's canary p99 in its band (worst: broker {worst.broker_id} "
        f"{worst.p99_ms:.0f} ms ≤ {worst.top_ms:.0f} ms)",
    )


def canary_throttle_feedback(*, cluster: Cluster, judged: list[BrokerJudgement]) -> None:
    verdict = canary_verdict(judged=judged)
    if verdict is not None:
        executions_throttle_adapt(cluster=cluster, verdict=verdict)
