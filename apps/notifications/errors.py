"""Errors of the notifications app."""


class NotificationChannelInvalid(ValueError):
    """A channel's settings were refused; nothing was changed."""


class DeliveryRetryable(Exception):
    """An attempt failed in a way worth retrying; the task retries with backoff."""
