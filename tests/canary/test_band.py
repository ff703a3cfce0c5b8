"""A broker's canary band: the baseline is the fastest of the first rounds, then follows
the rounds in band; the top is twice it (at least the floor); two rounds in a row above
it put the broker out, one round inside brings it back, and a slow spell does not
raise the band it is judged by."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from apps.canary.band import WARMUP_ROUNDS, BandRules, BandState, band_step, band_top_ms
from apps.canary.band_updates import canary_bands_update
from apps.canary.models import CanaryBand, CanaryWindow
from apps.canary.signals import canary_band_changed

RULES = BandRules(factor=2.0, floor_ms=50.0, strikes=2, weight=0.5)
START = BandState(baseline_ms=None, strikes=0, outside=False)


def _steps(p99s: list[float | None], state: BandState = START) -> list[BandState]:
    states = []
    for p99 in p99s:
        state = band_step(state=state, p99_ms=p99, acked=0 if p99 is None else 10, rules=RULES)
        states.append(state)
    return states


def _warmed(baseline: float) -> BandState:
    return BandState(baseline_ms=baseline, strikes=0, outside=False, fed=WARMUP_ROUNDS)


def test_it_tops_the_band_at_the_baseline_times_the_factor_and_at_least_the_floor() -> None:
    assert band_top_ms(baseline_ms=None, rules=RULES) == 50.0
    assert band_top_ms(baseline_ms=10.0, rules=RULES) == 50.0
    assert band_top_ms(baseline_ms=40.0, rules=RULES) == 80.0


def test_it_warms_up_on_the_fastest_of_the_first_rounds_and_judges_nothing_meanwhile() -> None:
    states = _steps([300.0, 60.0, None, 70.0, 55.0, 58.0])
    assert [s.baseline_ms for s in states[:5]] == [300.0, 60.0, 60.0, 60.0, 55.0]
    assert not any(s.outside or s.strikes for s in states[:5])
    assert states[4].fed == 4  # the round with nothing acknowledged did not count
    assert states[5].fed == WARMUP_ROUNDS and states[5].baseline_ms == 55.0


def test_it_puts_a_broker_out_after_two_rounds_above_and_back_after_one_inside() -> None:
    states = _steps([40.0, 90.0, 40.0, 90.0, 95.0, 30.0], _warmed(40.0))
    assert [s.outside for s in states] == [False, False, False, False, True, False]
    # the slow rounds left the baseline where the rounds in band put it
    assert states[4].baseline_ms == states[2].baseline_ms == 40.0


def test_it_counts_a_round_with_nothing_acknowledged_as_above() -> None:
    states = _steps([5.0, None, None], _warmed(5.0))
    assert [s.outside for s in states] == [False, False, True]


def test_it_follows_the_baseline_as_a_moving_average() -> None:
    states = _steps([20.0, 20.0], _warmed(10.0))
    assert [s.baseline_ms for s in states] == [15.0, 17.5]


def _window(cluster, broker: int, at, p99: float | None) -> CanaryWindow:
    acked = 0 if p99 is None else 10
    return CanaryWindow.objects.create(
        cluster=cluster,
        broker_id=broker,
        at=at,
        sent=10,
        acked=acked,
        received=acked,
        errors=10 - acked,
        produce_p50_ms=p99,
        produce_p99_ms=p99,
    )


@pytest.mark.django_db
def test_it_signals_each_broker_leaving_and_coming_back_once(cluster, settings) -> None:
    settings.CANARY_BAND_FLOOR_MS = 50.0
    settings.CANARY_BAND_STRIKES = 2
    seen: list[tuple] = []

    def catch(sender, **kw) -> None:
        seen.append((kw["broker_id"], kw["outside"], kw["p99_ms"], kw["top_ms"]))

    canary_band_changed.connect(catch, dispatch_uid="test-band")
    try:
        t0 = timezone.now()
        warm = [(5.0, 5.0)] * WARMUP_ROUNDS
        rounds = [*warm, (5.0, 120.0), (6.0, 130.0), (5.0, 140.0), (5.0, 4.0)]
        for i, (p1, p2) in enumerate(rounds):
            at = t0 + timedelta(seconds=5 * i)
            windows = [_window(cluster, 1, at, p1), _window(cluster, 2, at, p2)]
            canary_bands_update(cluster=cluster, windows=windows)
    finally:
        canary_band_changed.disconnect(dispatch_uid="test-band")

    assert seen == [(2, True, 130.0, 50.0), (2, False, 4.0, 50.0)]
    bands = {b.broker_id: b for b in CanaryBand.objects.filter(cluster=cluster)}
    assert not bands[1].outside and not bands[2].outside
    # 5 ms warm, then 4 ms in band, weighed as one round of the 30-minute average
    assert bands[2].baseline_ms == pytest.approx(5.0, abs=0.01)
