"""Hashes of the plans and reports of fixed generated cases: a speed change must leave
them unchanged (the same decisions, faster).

    .venv/bin/python bench/plan_hashes.py                      # 7 cases, ~10 s
    .venv/bin/python bench/plan_hashes.py --large              # + 270 brokers, 4 dirs
    .venv/bin/python bench/plan_hashes.py --write base.json    # keep them
    .venv/bin/python bench/plan_hashes.py --check base.json    # IDENTICAL or the cases that differ

Each case prints its SHA-256 prefix (plan JSON and report JSON, the report's timings
left out) and its CPU seconds. SKIP=name,... leaves cases out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "scripts"), str(ROOT / "bench")]

from bench_planner import make_cluster  # noqa: E402
from devkit.jbod_snapshot import dirs_add  # noqa: E402

from apps.balancer.engine import PlannerOptions, propose  # noqa: E402


def _untimed(value):
    if isinstance(value, dict):
        return {k: _untimed(v) for k, v in value.items() if k != "seconds"}
    if isinstance(value, list):
        return [_untimed(v) for v in value]
    return value


def _cases(large: bool) -> Iterator[tuple[str, dict, dict]]:
    yield "full20", make_cluster(20, 2000), {}
    s100 = make_cluster(100, 50000)
    yield "full100", s100, {}
    yield "remove100", s100, {"mode": "remove-brokers", "brokers": [3, 7]}
    yield "demote100", s100, {"mode": "demote", "brokers": [5]}
    yield "full100x4", dirs_add(make_cluster(100, 50000), dirs=4, skew=0.5), {}
    d40 = dirs_add(make_cluster(40, 8000), dirs=3, skew=0.5)
    yield "full40x3", d40, {}
    first = d40["brokers"][0]
    disks = [(first["id"], first["log_dirs"][0]["path"])]
    yield "rmdisk40", d40, {"mode": "remove-disks", "disks": disks}
    if large:
        yield "large4", dirs_add(make_cluster(270, 433000), dirs=4, skew=0.5), {}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--large", action="store_true")
    ap.add_argument("--write")
    ap.add_argument("--check")
    args = ap.parse_args()
    skip = set(os.environ.get("SKIP", "").split(","))
    out: dict[str, str] = {}
    for name, snap, kw in _cases(args.large):
        if name in skip:
            continue
        c0 = time.process_time()
        p = propose(snap, options=PlannerOptions(), **kw)
        body = json.dumps([p.plan, _untimed(p.report)], sort_keys=True, default=str)
        out[name] = hashlib.sha256(body.encode()).hexdigest()[:16]
        print(name, out[name], f"{time.process_time() - c0:.2f}s", flush=True)
    if args.write:
        Path(args.write).write_text(json.dumps(out, indent=1))
    if args.check:
        base = json.loads(Path(args.check).read_text())
        differ = [k for k in out if base.get(k) != out[k]]
        print("IDENTICAL" if not differ else f"DIFFER: {differ}")


if __name__ == "__main__":
    main()
