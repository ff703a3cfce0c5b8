"""The figures of each broker's disks (JBOD) in the report: every dir's bytes and
leaders' bytes in before and after, how evenly each broker uses its dirs, and what
the plan copies between dirs (BALANCING.md §8 "disks")."""

from __future__ import annotations

import numpy as np

from .disks import DiskModel


def _ratios(disks: DiskModel) -> tuple[float, float]:
    """(usage, leader bytes in): the highest ratio of a dir to its broker's mean,
    over brokers with two or more dirs taking replicas (1.0: perfectly even)."""
    out = []
    for measure in (disks.used, disks.lead):
        share = disks.shares(measure)
        ratio = np.divide(measure, share, out=np.zeros_like(share), where=share > 0)
        out.append(float(ratio.max()) if (share > 0).any() else 1.0)
    return out[0], out[1]


def _known(x: float) -> float | None:
    return None if np.isnan(x) else float(x)


def disk_figures(before: DiskModel, after: DiskModel) -> dict:
    snap = after.snap
    paths = snap.log_dirs or []
    usage = _ratios(before), _ratios(after)
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
                        "used_before": round(max(float(before.used[b, d]), 0.0), 1),
                        "used_after": round(max(float(after.used[b, d]), 0.0), 1),
                        "leader_bytes_in_before": round(max(float(before.lead[b, d]), 0.0), 3),
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
