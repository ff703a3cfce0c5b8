"""`manage.py propose`: plan a rebalance offline from a snapshot file (BALANCING.md §5).

Needs no database, Kafka, Redis or Spark: it reads a snapshot, writes the plan (and
optionally the report) and prints a one-screen summary. On any error it exits
non-zero with one line on stderr and leaves no plan file behind: 2 for a usage error
(an unknown mode, a malformed option), as command-line tools do, 1 for anything else.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.balancer.engine import (
    MODES,
    SOFT_GOALS,
    BalancerError,
    PlannerOptions,
    disk_parse,
    propose,
)
from apps.balancer.engine.options import (
    DEFAULT_BALANCE_THRESHOLD,
    DEFAULT_CAPACITY_THRESHOLD,
    DEFAULT_MAX_REPLICAS_PER_BROKER,
)
from apps.core.bounds import JSON_DEPTH_MAX, json_depth_exceeds

USAGE_ERROR = 2  # the exit status of a malformed command line, as argparse's


def _human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def _write_atomic(path: Path, data: Any) -> Path:
    """Write JSON to a temporary file beside `path`; the caller renames it."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); give it the usual mode under the umask
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
    except BaseException:
        os.unlink(tmp)
        raise
    return Path(tmp)


class Command(BaseCommand):
    help = (
        "Plan a rebalance from a cluster snapshot and write the kafka-reassign-partitions "
        "JSON. Offline: no database, Kafka, Redis or Spark."
    )
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--snapshot", required=True, help="cluster snapshot JSON file")
        parser.add_argument("--output", required=True, help="where to write the plan JSON")
        parser.add_argument("--mode", default="full", help=f"one of {', '.join(MODES)}")
        parser.add_argument(
            "--brokers",
            default="",
            help="comma-separated broker ids (add-/remove-brokers, demote)",
        )
        parser.add_argument(
            "--disks",
            default="",
            help="comma-separated BROKER:DIR log dirs to empty (remove-disks)",
        )
        parser.add_argument(
            "--demoted",
            default="",
            help="comma-separated broker ids kept demoted: no plan makes them lead",
        )
        parser.add_argument("--report", help="where to write the report JSON")
        parser.add_argument(
            "--allow-data-loss",
            action="store_true",
            help="re-create partitions whose every replica is on dead brokers (empty)",
        )
        parser.add_argument(
            "--goals",
            action="append",
            help="soft goals in priority order, comma-separated (hard goals always run): "
            + ", ".join(SOFT_GOALS),
        )
        parser.add_argument(
            "--threshold",
            action="append",
            default=[],
            metavar="[GOAL=]VALUE",
            help=f"balance threshold of every distribution goal (default "
            f"{DEFAULT_BALANCE_THRESHOLD}) or of one goal; repeatable",
        )
        parser.add_argument(
            "--capacity-threshold",
            type=float,
            default=DEFAULT_CAPACITY_THRESHOLD,
            help=f"share of a capacity a broker may use (default {DEFAULT_CAPACITY_THRESHOLD})",
        )
        parser.add_argument(
            "--max-replicas-per-broker",
            type=int,
            default=DEFAULT_MAX_REPLICAS_PER_BROKER,
            help=f"hard cap per broker (default {DEFAULT_MAX_REPLICAS_PER_BROKER})",
        )

    # ---------------------------------------------------------------- parsing
    def _options(self, opts: dict) -> PlannerOptions:
        balance = DEFAULT_BALANCE_THRESHOLD
        per_goal: dict[str, float] = {}
        for item in opts["threshold"]:
            name, sep, value = item.rpartition("=")
            try:
                number = float(value)
            except ValueError:
                raise CommandError(
                    f"--threshold expects VALUE or GOAL=VALUE, got {item!r}",
                    returncode=USAGE_ERROR,
                ) from None
            if sep:
                per_goal[name.strip()] = number
            else:
                balance = number
        goals = None
        if opts["goals"] is not None:
            goals = tuple(
                g.strip() for chunk in opts["goals"] for g in chunk.split(",") if g.strip()
            )
        return PlannerOptions(
            goals=goals,
            balance_threshold=balance,
            thresholds=per_goal,
            capacity_threshold=opts["capacity_threshold"],
            max_replicas_per_broker=opts["max_replicas_per_broker"],
            allow_data_loss=opts["allow_data_loss"],
            demoted=tuple(self._brokers(opts["demoted"], "--demoted")),
        )

    @staticmethod
    def _brokers(raw: str, option: str = "--brokers") -> list[int]:
        out = []
        for item in raw.split(","):
            item = item.strip()
            if not item:
                continue
            try:
                out.append(int(item))
            except ValueError:
                raise CommandError(
                    f"{option} expects comma-separated broker ids, got {item!r}",
                    returncode=USAGE_ERROR,
                ) from None
        return out

    @staticmethod
    def _disks(raw: str) -> list[tuple[int, str]]:
        out = []
        for item in filter(None, (x.strip() for x in raw.split(","))):
            pair = disk_parse(item)
            if pair is None:
                raise CommandError(
                    f"--disks expects comma-separated BROKER:DIR, got {item!r}",
                    returncode=USAGE_ERROR,
                )
            out.append(pair)
        return out

    @staticmethod
    def _read_snapshot(path: Path) -> Any:
        try:
            text = path.read_text()
        except OSError as err:
            raise CommandError(f"cannot read snapshot {path}: {err.strerror}") from None
        except UnicodeDecodeError:
            raise CommandError(f"snapshot {path} is not UTF-8 text") from None
        too_deep = CommandError(
            f"snapshot {path} nests deeper than {JSON_DEPTH_MAX} levels: not a cluster snapshot"
        )
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise CommandError(
                f"snapshot {path} is not valid JSON: {err.msg} at line {err.lineno} "
                f"column {err.colno}"
            ) from None
        except RecursionError:
            raise too_deep from None
        if json_depth_exceeds(value=data, max_depth=JSON_DEPTH_MAX):
            raise too_deep
        return data

    # ---------------------------------------------------------------- main
    def handle(self, *args: Any, **opts: Any) -> None:
        output = Path(opts["output"])
        report_path = Path(opts["report"]) if opts["report"] else None
        for target in filter(None, (output, report_path)):
            if not target.parent.is_dir():
                raise CommandError(f"directory {target.parent} does not exist")
        if opts["mode"] not in MODES:
            raise CommandError(
                f"unknown mode {opts['mode']!r} (known: {', '.join(MODES)})",
                returncode=USAGE_ERROR,
            )
        options = self._options(opts)
        brokers = self._brokers(opts["brokers"])
        disks = self._disks(opts["disks"])
        data = self._read_snapshot(Path(opts["snapshot"]))
        try:
            proposal = propose(
                data, mode=opts["mode"], brokers=brokers, options=options, disks=disks
            )
        except BalancerError as err:
            raise CommandError(str(err)) from None

        # both files land only once both are fully written: never a partial plan
        written: list[tuple[Path, Path]] = []
        try:
            written.append((_write_atomic(output, proposal.plan), output))
            if report_path is not None:
                written.append((_write_atomic(report_path, proposal.report), report_path))
        except OSError as err:
            for tmp, _ in written:
                tmp.unlink(missing_ok=True)
            raise CommandError(f"cannot write {err.filename}: {err.strerror}") from None
        for tmp, final in written:
            os.replace(tmp, final)
        self._summary(proposal.report, output, report_path)

    def _summary(self, r: dict, output: Path, report_path: Path | None) -> None:
        w = self.stdout.write
        m = r["movement"]
        w(
            f"Plan for cluster {r['cluster'] or '?'} (mode {r['mode']}): "
            f"{m['partitions_changed']:,} of {r['partitions']:,} partitions change, "
            f"{r['brokers']['usable']} of {r['brokers']['total']} brokers usable"
        )
        w(f"{'balance ratio':<14}{'before':>9}{'after':>9}{'bound':>9}")
        for name, fig in r["balance"].items():
            w(f"{name:<14}{fig['before']:>9.3f}{fig['after']:>9.3f}{fig['lower_bound']:>9.3f}")
        w(
            f"replica moves {m['replica_moves']:,}, bytes moved {_human_bytes(m['bytes_moved'])}, "
            f"leadership moves {m['leadership_moves']:,}"
        )
        disks = r.get("disks")
        if disks:
            u, lb = disks["usage_ratio"], disks["leader_bytes_in_ratio"]
            w(
                f"disks (a dir against its broker's mean): use {u['before']:.3f} -> "
                f"{u['after']:.3f}, leaders' bytes in {lb['before']:.3f} -> {lb['after']:.3f}; "
                f"{disks['moves_between_dirs']:,} replica(s) to another dir of their broker "
                f"({_human_bytes(disks['bytes_between_dirs'])})"
            )
        unmet = [g["name"] for g in r["goals"] if not g["satisfied_final"]]
        w("goals: all satisfied" if not unmet else f"goals not fully satisfied: {', '.join(unmet)}")
        for g in r.get("unmet_hard_goals", []):
            # hard goals the cluster can't meet (e.g. overloaded): how far off, and who
            w(
                f"UNMET hard goal {g['name']}: violation {g['violation_before']:.4g} -> "
                f"{g['violation_after']:.4g}, {g['offenders']} offender(s)"
                + (f", worst: {g['worst']}" if g["worst"] else "")
            )
        skipped = r["data_loss"]["skipped"]
        if skipped:
            w(
                f"left out {len(skipped)} partition(s) with every replica on dead brokers "
                f"(e.g. {skipped[0]}); --allow-data-loss re-creates them empty"
            )
        if r["data_loss"]["healed"]:
            w(f"re-created {len(r['data_loss']['healed'])} partition(s) EMPTY (data lost)")
        if r["unfixable"]:
            u = r["unfixable"][0]
            w(
                f"could not fix {len(r['unfixable'])} partition(s), e.g. {u['partition']}: "
                f"{u['reason']}"
            )
        w(f"time {r['seconds']['total']:.2f} s")
        w(f"wrote {output}" + (f" and {report_path}" if report_path else ""))
