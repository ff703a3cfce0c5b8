"""Bounded ids in URL paths: `<id:plan_id>` fits the database's integer,
`<broker:node_id>` Kafka's int32. Past that a path matches nothing (404) instead of
overflowing the query (500)."""

from django.urls import register_converter
from django.urls.converters import get_converters

from .bounds import BROKER_ID_MAX


class IdConverter:
    """`<id:...>`: a database id."""

    regex = "[0-9]{1,19}"
    maximum = 2**63 - 1

    def to_python(self, value: str) -> int:
        number = int(value)
        if number > self.maximum:
            raise ValueError(value)  # Django reads it as "no match"
        return number

    def to_url(self, value: int) -> str:
        return str(value)


class BrokerIdConverter(IdConverter):
    """`<broker:...>`: a Kafka broker id (int32)."""

    regex = "[0-9]{1,10}"
    maximum = BROKER_ID_MAX


def url_converters_register() -> None:
    """Register `id` and `broker`, once (each URLconf using them calls this first)."""
    if "broker" not in get_converters():
        register_converter(IdConverter, "id")
        register_converter(BrokerIdConverter, "broker")
