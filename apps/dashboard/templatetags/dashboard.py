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
