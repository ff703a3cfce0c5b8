"""Bounded broker ids in URL paths: `<broker:node_id>` is Kafka's int32; past that a
path matches nothing (404) instead of reaching a query as an overflow (500). Database
ids need none: Django answers an out-of-range `<int:...>` lookup with no rows."""

from django.urls import register_converter
from django.urls.converters import get_converters

from .bounds import BROKER_ID_MAX


class BrokerIdConverter:
    """`<broker:...>`: a Kafka broker id (int32)."""

    regex = "[0-9]{1,10}"
    maximum = BROKER_ID_MAX

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > self.maximum:
            raise ValueError(value)  # Django reads it as "no match"
        return number

    def to_url(self, value: int) -> str:
        return str(value)


def url_converters_register() -> None:
    """Register `broker`, once (each URLconf using it calls this first)."""
    if "broker" not in get_converters():
        register_converter(BrokerIdConverter, "broker")
