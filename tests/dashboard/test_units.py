"""One unit system everywhere: bytes in IEC units (KiB, MiB, GiB) in tables, cards and
charts alike, never Django's filesizeformat ("MB" for MiB) or Plotly's SI prefixes."""

from pathlib import Path

import pytest

from apps.dashboard.templatetags.dashboard import iec_bytes

DASHBOARD = Path(__file__).resolve().parents[2] / "apps" / "dashboard"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (None, ""),
        (0, "0\xa0B"),
        (1023, "1023\xa0B"),
        (1536, "1.5\xa0KiB"),
        (4 * 1024**2, "4.0\xa0MiB"),
        (int(1.4 * 1024**3), "1.4\xa0GiB"),
    ],
)
def test_it_shows_bytes_in_iec_units(value, shown):
    assert iec_bytes(value) == shown


def test_no_template_uses_decimal_labels_for_binary_sizes():
    offenders = [
        p.name
        for p in (DASHBOARD / "templates").rglob("*.html")
        if "filesizeformat" in p.read_text()
    ]
    assert offenders == []


def test_no_chart_uses_si_prefixes_for_bytes():
    for name in ("charts.js", "plan.js", "whatif.js"):
        text = (DASHBOARD / "static" / "dashboard" / name).read_text()
        assert ":.3s" not in text and '".2s"' not in text, name
    assert "function iecUnit" in (DASHBOARD / "static" / "dashboard" / "charts.js").read_text()
