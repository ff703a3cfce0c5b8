class GrantError(Exception):
    """A grant change that cannot be made; the message says why."""


class GrantPermissionDenied(GrantError):
    """The actor may not manage grants where this one applies."""
