"""Search limits shared by the goals' optimisers: rounds, rejections before giving up."""

from __future__ import annotations

MAX_ROUNDS = 6
# consecutive rejected candidates after which a source broker is given up for a pass
MAX_FAILS = 200
MAX_IDLE_SOURCES = 32  # source brokers in a row without a move end a pass
