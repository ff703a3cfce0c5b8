"""Ranges for the numbers the product accepts from outside, and bounded JSON.

A number past its range reaches the database or Kafka as an overflow (a 500, a
traceback); JSON nested past Python's recursion limit crashes the parser. Every door
(API, pages, websockets, `manage.py propose`) checks against these first.
"""

import json
from typing import Any

# Kafka's broker ids and partition numbers are int32.
INT32_MAX = 2**31 - 1
BROKER_ID_MAX = INT32_MAX
# A replication throttle (bytes/s): 1 TB/s is beyond any broker's network.
THROTTLE_BYTES_PER_SEC_MAX = 10**12
# Concurrent moves, per broker or cluster-wide: beyond any plan's move count.
MAX_MOVES_MAX = 1_000_000
# Deepest JSON nesting accepted from outside; the product's own documents nest < 10.
JSON_DEPTH_MAX = 64


class JSONBoundsError(ValueError):
    """Not JSON, too large, or nested too deep: the message says which."""


def _constant_refuse(name: str) -> Any:
    # NaN and Infinity are not JSON, and slip past range checks (NaN > x is False).
    raise JSONBoundsError(f"not valid JSON: {name} is not a number JSON allows")


def json_depth_exceeds(*, value: Any, max_depth: int) -> bool:
    """Whether `value` (parsed JSON) nests objects/arrays deeper than `max_depth`.
    Iterative, so it never recurses as deep as the document."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > max_depth:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def json_bounded_loads(
    *, text: str | bytes, max_bytes: int | None = None, max_depth: int = JSON_DEPTH_MAX
) -> Any:
    """`json.loads` that refuses a text over `max_bytes` or nested over `max_depth` with
    a JSONBoundsError (never RecursionError)."""
    if max_bytes is not None and len(text) > max_bytes:
        raise JSONBoundsError(f"larger than {max_bytes} bytes")
    try:
        value = json.loads(text, parse_constant=_constant_refuse)
    except RecursionError:
        raise JSONBoundsError(f"nested deeper than {max_depth} levels") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise JSONBoundsError(f"not valid JSON: {exc}") from None
    if json_depth_exceeds(value=value, max_depth=max_depth):
        raise JSONBoundsError(f"nested deeper than {max_depth} levels")
    return value
