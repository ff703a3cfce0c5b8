"""A broker's canary band: how slow its produce p99 may get before clients notice.

The top of the band is max(baseline × CANARY_BAND_FACTOR, CANARY_BAND_FLOOR_MS): the
floor keeps a fast, quiet broker's few milliseconds of noise from counting. A broker
leaves its band after CANARY_BAND_STRIKES rounds in a row above the top (a round with
nothing acknowledged counts as above); one round inside brings it back. The baseline
is the fastest p99 of the broker's first WARMUP_ROUNDS rounds (the first rounds of a
new connection or a new canary partition are slow, and would set the band for half an
hour), then a moving average of the rounds inside the band: the band judges change.
"""

from __future__ import annotations

from dataclasses import dataclass

WARMUP_ROUNDS = 5


@dataclass(frozen=True)
class BandRules:
    factor: float
    floor_ms: float
    strikes: int
    # weight of one round in the baseline's moving average: interval / baseline span
    weight: float


@dataclass(frozen=True)
class BandState:
    baseline_ms: float | None
    strikes: int
    outside: bool
    # rounds that fed the baseline (the first WARMUP_ROUNDS: the fastest of them)
    fed: int = 0


def band_top_ms(*, baseline_ms: float | None, rules: BandRules) -> float:
    if baseline_ms is None:
        return rules.floor_ms
    return max(baseline_ms * rules.factor, rules.floor_ms)


def band_step(*, state: BandState, p99_ms: float | None, acked: int, rules: BandRules) -> BandState:
    """The band after one round in which the broker acknowledged `acked` records with
    a produce p99 of `p99_ms` (None when none came back)."""
    top = band_top_ms(baseline_ms=state.baseline_ms, rules=rules)
    above = acked == 0 or p99_ms is None or p99_ms > top
    strikes = state.strikes + 1 if above else 0
    outside = strikes >= rules.strikes if above else False
    baseline, fed = state.baseline_ms, state.fed
    measured = acked > 0 and p99_ms is not None
    if fed < WARMUP_ROUNDS:
        if measured:
            baseline = p99_ms if baseline is None else min(baseline, p99_ms)
            fed += 1
        # no verdict before the band is known
        return BandState(baseline_ms=baseline, strikes=0, outside=False, fed=fed)
    if not above and measured and baseline is not None:
        fed += 1
        baseline += (p99_ms - baseline) * rules.weight
    return BandState(baseline_ms=baseline, strikes=strikes, outside=outside, fed=fed)
