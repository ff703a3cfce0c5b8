"""The dev cluster's error types: what a user must fix, and which CLI exit code it gets."""

from __future__ import annotations


class DevClusterError(Exception):
    """Something the user must fix (missing java/jars, a node that won't start, ...)."""


class UnknownNodeError(DevClusterError):
    """A broker id that is not part of the dev cluster (CLI exit code 2)."""
