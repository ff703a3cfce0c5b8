"""The figures of each broker's disks (JBOD) in the report: every dir's bytes and
leaders' bytes in before and after, how evenly each broker uses its dirs, and what
the plan copies between dirs (BALANCING.md §8 "disks")."""

from __future__ import annotations

import numpy as np

from .disks import DiskModel


def _ratios(disks: DiskModel, used: np.ndarray, lead: np.ndarray) -> tuple[float, float]:
    """(usage, leader bytes in) of dirs holding `used` bytes, `lead` leader bytes in
    (the dirs of `disks`, on any assignment): the highest ratio of a dir to its
    broker's mean, over brokers with two or more dirs taking replicas (1.0:
    perfectly even)."""
    out = []
    for measure in (used, lead):
        share = disks.shares(measure)
        ratio = np.divide(measure, share, out=np.zeros_like(share), where=share > 0)
        out.append(float(ratio.max()) if (share > 0).any() else 1.0)
    return out[0], out[1]


def _known(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def disk_figures(before: tuple[np.ndarray, np.ndarray], after: DiskModel) -> dict:
    """The figures of the dirs of `after`, and of the same dirs at the start, which
    held `before` = (used, lead) (`ClusterModel.disks_start`)."""
    snap = after.snap
    paths = snap.log_dirs or []
    used_before, lead_before = before
    usage = _ratios(after, used_before, lead_before), _ratios(after, after.used, after.lead)
    moved = after.changed() & after.stayed
    sizes = np.broadcast_to(snap.size[:, None], moved.shape)
    brokers = []
    for b in np.flatnonzero(after.listed).tolist():
        brokers.append(
            {
                "broker": int(snap.broker_ids[b]),
                "dirs": [
                    {
                        "path": path,
                        "total": _known(snap.log_dir_total[b, d]),
                        "takes_replicas": bool(after.takes[b, d]),
                        # max(0): what a dir gave away may leave -0.0 behind
                        "used_before": round(max(float(used_before[b, d]), 0.0), 1),
                        "used_after": round(max(float(after.used[b, d]), 0.0), 1),
                        "leader_bytes_in_before": round(max(float(lead_before[b, d]), 0.0), 3),
                        "leader_bytes_in_after": round(max(float(after.lead[b, d]), 0.0), 3),
                    }
                    for d, path in enumerate(paths[b])
                ],
            }
        )
    return {
        "usage_ratio": {"before": round(usage[0][0], 6), "after": round(usage[1][0], 6)},
        "leader_bytes_in_ratio": {
            "before": round(usage[0][1], 6),
            "after": round(usage[1][1], 6),
        },
        "moves_between_dirs": int(moved.sum()),
        "bytes_between_dirs": int(round(float(sizes[moved].sum()))),
        "brokers": brokers,
    }
