"""Errors the engine raises. Each message is one line meant for an operator."""


class BalancerError(Exception):
    """Base of every error the engine raises on purpose."""


class SnapshotError(BalancerError):
    """The snapshot is malformed or inconsistent (unknown broker, bad field, ...)."""


class PlanError(BalancerError):
    """The request cannot be planned (e.g. more replicas than usable brokers)."""
