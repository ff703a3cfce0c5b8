"""A goal's judgement: which brokers are out of the band, on which side, by how much.

Each goal's `judge` builds one for readers outside the engine (BALANCING.md §8
"goals[].start/end").
"""

from __future__ import annotations

import math

MAX_OFFENDERS = 10  # worst offenders listed per goal in a judgement


def judgement(violation: float, offenders: list[dict], total: int) -> dict:
    return {
        "violated": violation > 0,
        "violation": violation,
        "offenders": offenders,
        "offenders_total": total,
    }


def _finite(x: float) -> float | None:
    return float(x) if math.isfinite(x) else None


def band_text(lo: float | None, hi: float | None, fmt: str) -> str:
    if lo is None and hi is None:
        return "band unbounded"
    if lo is None:
        return f"band up to {hi:{fmt}}"
    if hi is None:
        return f"band from {lo:{fmt}}"
    return f"band {lo:{fmt}}\u2013{hi:{fmt}}"


def broker_offender(
    *,
    broker: int,
    who: str = "",
    side: str,
    value: float,
    lo: float,
    hi: float,
    scale: float | None,
    scale_name: str,
) -> dict:
    """One broker out of its band. With a scale (the broker's fair share, or its
    capacity) the value and band are also given as multiples of it."""
    out: dict = {
        "broker": broker,
        "side": side,
        "value": float(value),
        "band": [_finite(lo), _finite(hi)],
    }
    if scale is not None and scale > 0 and math.isfinite(scale):
        ratio = value / scale
        rlo, rhi = _finite(lo / scale), _finite(hi / scale)
        out.update({"ratio": ratio, "ratio_of": scale_name, "band_ratio": [rlo, rhi]})
        what = f"{ratio:.2f} \u00d7 {scale_name}, {band_text(rlo, rhi, '.2f')}"
    else:
        what = f"{value:g}, {band_text(_finite(lo), _finite(hi), 'g')}"
    out["text"] = f"{who or f'broker {broker}'} {side} the band: {what}"
    return out
