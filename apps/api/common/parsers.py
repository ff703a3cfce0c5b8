"""The API's body parsers, bounded: a body over API_MAX_BODY_BYTES or JSON nested
deeper than JSON_DEPTH_MAX is a 400 with a JSON error, never a crash."""

from typing import Any

from django.conf import settings
from django.core.exceptions import TooManyFieldsSent
from django.http import QueryDict
from rest_framework.exceptions import ParseError
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser

from apps.core.bounds import JSONBoundsError, json_bounded_loads


def _body_read(stream: Any) -> bytes:
    limit = settings.API_MAX_BODY_BYTES
    raw = stream.read(limit + 1) if stream is not None else b""
    if len(raw) > limit:
        raise ParseError(f"request body larger than {limit} bytes")
    return raw


class BoundedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        raw = _body_read(stream)
        try:
            return json_bounded_loads(text=raw)
        except JSONBoundsError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None


class BoundedFormParser(FormParser):
    def parse(self, stream, media_type=None, parser_context=None) -> QueryDict:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            return QueryDict(_body_read(stream), encoding=encoding)
        except TooManyFieldsSent as exc:
            raise ParseError(str(exc)) from None


class BoundedMultiPartParser(MultiPartParser):
    """Multipart as test clients and HTML forms send it, by its declared length (the
    stream never yields more); Django bounds its field count and sizes."""

    def parse(self, stream, media_type=None, parser_context=None):
        meta = parser_context["request"].META
        limit = settings.API_MAX_BODY_BYTES
        try:
            length = int(meta.get("CONTENT_LENGTH") or 0)
        except ValueError:
            raise ParseError("Content-Length is not a number") from None
        if length > limit:
            raise ParseError(f"request body larger than {limit} bytes")
        return super().parse(stream, media_type, parser_context)
