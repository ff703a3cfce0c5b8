"""The run-dir lock that serializes up/down/start/stop across processes."""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator
from pathlib import Path


class RunDirLock:
    """An flock on <run_dir>/.lock, re-entrant within one object (use() calls up())."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._depth = 0

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        # Serializes e.g. `make run` and a test run working on the same run dir.
        if self._depth:
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with open(self.run_dir / ".lock", "w") as fh:
            fcntl.flock(fh, fcntl.LOCK_EX)
            self._depth = 1
            try:
                yield
            finally:
                self._depth = 0
                fcntl.flock(fh, fcntl.LOCK_UN)
