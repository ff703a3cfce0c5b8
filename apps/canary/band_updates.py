"""Judge each broker of a canary round against its band and record the changes."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction

from apps.clusters.models import Cluster

from .band import WARMUP_ROUNDS, BandRules, BandState, band_step, band_top_ms
from .models import CanaryBand, CanaryWindow
from .signals import canary_band_changed


def band_rules() -> BandRules:
    span = max(settings.CANARY_BASELINE_MINUTES * 60.0, settings.CANARY_INTERVAL)
    return BandRules(
        factor=settings.CANARY_BAND_FACTOR,
        floor_ms=settings.CANARY_BAND_FLOOR_MS,
        strikes=settings.CANARY_BAND_STRIKES,
        weight=min(1.0, settings.CANARY_INTERVAL / span),
    )


@dataclass(frozen=True)
class BrokerJudgement:
    """One broker's round against the top of its band as it stood before the round."""

    broker_id: int
    sent: int
    acked: int
    p99_ms: float | None
    # None while the broker's band warms up: nothing to judge its latency by yet
    top_ms: float | None

    @property
    def within(self) -> bool:
        if self.acked < self.sent:
            return False
        return self.top_ms is None or (self.p99_ms is not None and self.p99_ms <= self.top_ms)


def canary_bands_update(*, cluster: Cluster, windows: list[CanaryWindow]) -> list[BrokerJudgement]:
    """Step each measured broker's band by its window; send `canary_band_changed` for
    each broker that left or came back into its band. Each broker's judgement."""
    rules = band_rules()
    judged: list[BrokerJudgement] = []
    with transaction.atomic():
        bands = {
            b.broker_id: b
            for b in CanaryBand.objects.select_for_update().filter(
                cluster=cluster, broker_id__in=[w.broker_id for w in windows]
            )
        }
        for w in windows:
            band = bands.get(w.broker_id)
            if band is None:
                band = CanaryBand(
                    cluster=cluster, broker_id=w.broker_id, top_ms=rules.floor_ms, changed_at=w.at
                )
            before = BandState(
                baseline_ms=band.baseline_ms,
                strikes=band.strikes,
                outside=band.outside,
                fed=band.fed,
            )
            after = band_step(state=before, p99_ms=w.produce_p99_ms, acked=w.acked, rules=rules)
            # judged against the top the round was measured against
            top = band_top_ms(baseline_ms=before.baseline_ms, rules=rules)
            judged.append(
                BrokerJudgement(
                    broker_id=w.broker_id,
                    sent=w.sent,
                    acked=w.acked,
                    p99_ms=w.produce_p99_ms,
                    top_ms=None if before.fed < WARMUP_ROUNDS else top,
                )
            )
            band.baseline_ms = after.baseline_ms
            band.strikes = after.strikes
            band.fed = after.fed
            band.top_ms = band_top_ms(baseline_ms=after.baseline_ms, rules=rules)
            if after.outside != before.outside:
                band.outside = after.outside
                band.changed_at = w.at
                band.save()
                canary_band_changed.send(
                    sender=Cluster,
                    cluster=cluster,
                    broker_id=w.broker_id,
                    outside=after.outside,
                    p99_ms=w.produce_p99_ms,
                    top_ms=top,
                    baseline_ms=before.baseline_ms,
                    at=w.at,
                )
            else:
                band.save()
    return judged
