"""What the intra-broker goals share: they judge and move replicas between the log
dirs of each broker (disks.py), after every broker-level goal and pass has run."""

from __future__ import annotations

from ..disks import DiskModel
from ..model import ClusterModel
from .goal import Goal
from .judging import MAX_OFFENDERS, judgement


def dir_name(disks: DiskModel, b: int, d: int) -> str:
    paths = disks.snap.log_dirs or []
    return f"broker {int(disks.snap.broker_ids[b])} dir {paths[b][d]}"


class DiskGoal(Goal):
    """A goal on the dirs of each broker; judged as met where no broker lists dirs."""

    disk_level = True

    def violation(self, model: ClusterModel) -> float:
        return 0.0 if model.disks is None else self.disk_violation(model.disks)

    def judge(self, model: ClusterModel) -> dict:
        if model.disks is None:
            return judgement(0.0, [], 0)
        found = sorted(self.disk_offenders(model.disks), key=lambda x: -x[0])
        offenders = [offender for _, offender in found[:MAX_OFFENDERS]]
        return judgement(self.disk_violation(model.disks), offenders, len(found))

    def disk_violation(self, disks: DiskModel) -> float:
        raise NotImplementedError

    def disk_offenders(self, disks: DiskModel) -> list[tuple[float, dict]]:
        """(how far out, offender) of every dir out of its band, in any order."""
        raise NotImplementedError


def dir_offender(
    disks: DiskModel, b: int, d: int, *, side: str, value: float, band: list, text: str
) -> dict:
    return {
        "broker": int(disks.snap.broker_ids[b]),
        "dir": (disks.snap.log_dirs or [])[b][d],
        "side": side,
        "value": float(value),
        "band": band,
        "text": f"{dir_name(disks, b, d)} {text}",
    }
