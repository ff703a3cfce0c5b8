"""The audit actions the notifications app records: channels added, edited, removed, tested."""

from enum import StrEnum


class ChannelAction(StrEnum):
    CREATED = "notification_channel.created"
    CHANGED = "notification_channel.changed"
    DELETED = "notification_channel.deleted"
    TESTED = "notification_channel.tested"
