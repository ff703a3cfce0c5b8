from django import template
from django.utils.safestring import mark_safe

register = template.Library()


@register.filter
def duration(seconds: float | None) -> str:
    """Seconds as "2 h 05 min", "3 min 20 s" or "12 s"; empty for None."""
    if seconds is None:
        return ""
    total = max(0, round(float(seconds)))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    if minutes:
        return f"{minutes} min {secs:02d} s"
    return f"{secs} s"


IEC_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


@register.filter
def iec_bytes(value: float | int | None) -> str:
    """Bytes in IEC units, as the charts and tables show them: "512 B", "1.5 GiB"."""
    if value is None:
        return ""
    n = float(value)
    for unit in IEC_UNITS:
        if abs(n) < 1024 or unit == IEC_UNITS[-1]:
            return f"{n:.0f}\xa0{unit}" if unit == "B" else f"{n:.1f}\xa0{unit}"
        n /= 1024
    return ""


@register.filter
def skew(value: float | None) -> str:
    """A broker's deviation from the mean (percent, None for a dead broker), flagged
    beyond ±10 % (warn) and ±25 % (bad). A filter rather than an include: the broker
    table shows it twice per broker, and an include each time is a large share of the
    page's time on a large cluster."""
    if value is None:
        return "—"
    flag = " bad" if abs(value) > 25 else " warn" if abs(value) > 10 else ""
    shown = round(float(value), 1) + 0.0  # + 0.0: no "-0.0"
    # Only a number and a fixed class: nothing to escape.
    return mark_safe(f'<span class="skew{flag}">{shown:.1f} %</span>')  # noqa: S308
