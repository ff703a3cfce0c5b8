from django import template

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
