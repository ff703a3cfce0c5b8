"""How one sync round of a cluster ended, for the callers that log or act on it."""

import enum


class SyncOutcome(enum.Enum):
    """True only for SYNCED, so `if cluster_sync(...)` reads "the model is fresh"."""

    SYNCED = "synced"
    # Not tried: the cluster's previous sync still holds the round's lease (it overran,
    # or another caller's sync runs now); that one brings the model up to date.
    SKIPPED = "skipped: the previous sync of the cluster still runs"
    # Tried and failed: unreachable, not authorized, or its secrets unreadable; the
    # cluster's `last_sync_error` says which.
    FAILED = "failed"

    def __bool__(self) -> bool:
        return self is SyncOutcome.SYNCED
