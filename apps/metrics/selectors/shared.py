"""Answers built once per cluster state stamp and shared by every open page.

After a sync that changed the model, every open cluster page asks for the same
regions and heatmap at once. The push told each of them the new stamp
(`cluster_state_stamp`); a page names it when it fetches, and the first request
builds the answer and keeps it in Django's cache under that stamp, so the other
pages are answered from the cache with no read of the model. The caller puts
everything else the answer depends on (query parameters, the viewer's permissions)
into `name`: viewers who may see different things never share an entry.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

from django.core.cache import cache

from .stamp import cluster_state_stamp

T = TypeVar("T")

# Long enough for every page to fetch after a push, short enough to free the memory
# of a stamp no page holds any more (a new one comes with every change).
SHARED_SECONDS = 300


def stamp_token(stamp: dict[str, str]) -> str:
    """The stamp as one query parameter: "<model>|<window>"."""
    return f"{stamp['model']}|{stamp['window']}"


def _stamp_parse(token: str) -> dict[str, str]:
    model, _, window = token.partition("|")
    return {"model": model, "window": window}


def _pushed_key(*, cluster_id: int) -> str:
    return f"shared:{cluster_id}:pushed"


async def stamp_pushed_note(*, cluster_id: int, stamp: dict[str, str]) -> None:
    """Note the stamp a push brought to this process's open pages (their consumers
    call this): a page naming it is then trusted without reading the stamp again.
    It came from the server, not from a client."""
    await cache.aset(_pushed_key(cluster_id=cluster_id), stamp_token(stamp), SHARED_SECONDS)


def _key(*, cluster_id: int, token: str, name: str) -> str:
    digest = hashlib.blake2b(repr((cluster_id, token, name)).encode(), digest_size=16)
    return f"shared:{cluster_id}:{digest.hexdigest()}"


def stamped_answer_get(
    *, cluster_id: int, token: str, name: str, build: Callable[[], T]
) -> tuple[dict[str, str], T]:
    """(stamp, answer): `build()`'s answer for the cluster state `token` names.

    A hit answers at once with the stamp `token` names. On a miss the answer is built
    and kept under the current stamp only: the one the last push brought to this
    process (`stamp_pushed_note`) when `token` is that one, else the stamp read from
    the model first. Never under a token only a client vouches for: a made-up or stale
    token can never have an answer filed under it, it just misses. An answer is never
    older than its stamp (the stamp is known before the build). An empty token always
    reads the current stamp (a page that may have missed pushes)."""
    if token:
        hit = cache.get(_key(cluster_id=cluster_id, token=token, name=name))
        if hit is not None:
            return _stamp_parse(token), hit
    if token and token == cache.get(_pushed_key(cluster_id=cluster_id)):
        stamp = _stamp_parse(token)
    else:
        stamp = cluster_state_stamp(cluster_id=cluster_id)
    key = _key(cluster_id=cluster_id, token=stamp_token(stamp), name=name)
    answer = cache.get(key)
    if answer is None:
        answer = build()
        cache.set(key, answer, SHARED_SECONDS)
    return stamp, answer
