"""The API's pages, bounded: `limit` is capped, an `offset` past any table is a 400
(past the database's integer it would be a 500)."""

from rest_framework.exceptions import ValidationError
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from apps.core.bounds import INT32_MAX

PAGE_SIZE_MAX = 1000


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    max_limit = PAGE_SIZE_MAX

    def get_offset(self, request: Request) -> int:
        offset = super().get_offset(request)
        if offset > INT32_MAX:
            raise ValidationError({self.offset_query_param: [f"at most {INT32_MAX}"]})
        return offset
