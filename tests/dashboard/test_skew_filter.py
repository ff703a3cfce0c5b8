"""The broker table's skew cells: percent with one decimal, flagged beyond ±10 / ±25 %."""

import pytest

from apps.dashboard.templatetags.dashboard import skew


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, "—"),
        (0.0, '<span class="skew">0.0 %</span>'),
        (-0.04, '<span class="skew">0.0 %</span>'),
        (9.96, '<span class="skew">10.0 %</span>'),
        (-12.34, '<span class="skew warn">-12.3 %</span>'),
        (25.5, '<span class="skew bad">25.5 %</span>'),
        (-40.0, '<span class="skew bad">-40.0 %</span>'),
    ],
)
def test_it_shows_a_brokers_skew_flagged_by_size(value, shown):
    assert skew(value) == shown
