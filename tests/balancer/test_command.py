"""`manage.py propose`: offline, one-screen summary, clean failures, no partial plan."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.balancer.engine import validate_plan
from tests.support.factories import MiB, broker, overloaded_snapshot, part, snapshot

ROOT = Path(__file__).resolve().parents[2]


def skewed() -> dict:
    return snapshot(
        [broker(b, network_in=100 * MiB, network_out=100 * MiB, disk=1e12) for b in (1, 2, 3)],
        [part("orders", i, [1], bytes_in=4 * MiB, size=1e9) for i in range(12)],
    )


def write(tmp_path: Path, data, name: str = "snapshot.json") -> Path:
    path = tmp_path / name
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("propose", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_it_writes_plan_and_report_and_prints_a_summary(tmp_path: Path) -> None:
    # no django_db mark: any database access would fail this test
    snap = skewed()
    plan_path, report_path = tmp_path / "plan.json", tmp_path / "report.json"
    out, _ = run(
        "--snapshot",
        str(write(tmp_path, snap)),
        "--output",
        str(plan_path),
        "--report",
        str(report_path),
    )
    plan = json.loads(plan_path.read_text())
    report = json.loads(report_path.read_text())
    assert validate_plan(plan, snap) == []
    assert len(plan["partitions"]) == report["movement"]["partitions_changed"] == 8
    for text in (
        "network_in",
        "before",
        "after",
        "replica moves 8",
        "bytes moved",
        "leadership moves",
        "time",
    ):
        assert text in out
    assert len(out.splitlines()) <= 24  # one screen
    assert plan_path.stat().st_mode & 0o044  # readable like any file, not private
    # no temporary files left behind
    assert {p.name for p in tmp_path.iterdir()} == {"snapshot.json", "plan.json", "report.json"}


def test_it_passes_mode_brokers_goals_and_thresholds(tmp_path: Path) -> None:
    snap = skewed()
    snap["brokers"].append(broker(4, network_in=100 * MiB, network_out=100 * MiB, disk=1e12))
    plan_path, report_path = tmp_path / "plan.json", tmp_path / "report.json"
    run(
        "--snapshot",
        str(write(tmp_path, snap)),
        "--output",
        str(plan_path),
        "--report",
        str(report_path),
        "--mode",
        "add-brokers",
        "--brokers",
        "4",
        "--goals",
        "network-in-distribution",
        "--threshold",
        "1.2",
        "--threshold",
        "network-in-distribution=1.01",
    )
    report = json.loads(report_path.read_text())
    plan = json.loads(plan_path.read_text())
    assert report["mode"] == "add-brokers" and report["brokers"]["added"] == [4]
    assert {e["replicas"][0] for e in plan["partitions"]} == {4}
    assert [g["name"] for g in report["goals"]][-1] == "network-in-distribution"
    assert report["goals"][-1]["threshold"] == 1.01


BAD_CASES = {
    "malformed JSON": ('{"brokers": [', "is not valid JSON"),
    "unknown broker": (
        snapshot([broker(1), broker(2)], [part("orders", 0, [1, 7])]),
        "partition orders-0: replica 7 is not a known broker",
    ),
    "rf above alive brokers": (
        snapshot([broker(1), broker(2), broker(3, alive=False)], [part("orders", 0, [1, 2, 3])]),
        "partition orders-0 has 3 replicas but only 2 alive brokers can hold them",
    ),
}


@pytest.mark.parametrize("case", BAD_CASES)
def test_it_fails_cleanly_without_writing_a_plan(tmp_path: Path, case: str) -> None:
    data, message = BAD_CASES[case]
    plan_path = tmp_path / "plan.json"
    with pytest.raises(CommandError, match=message):
        run(
            "--snapshot",
            str(write(tmp_path, data)),
            "--output",
            str(plan_path),
            "--report",
            str(tmp_path / "report.json"),
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snapshot.json"]


def propose_in_a_shell(tmp_path: Path, data, *extra: str) -> subprocess.CompletedProcess:
    """`manage.py propose` in a process of its own, on `data`, planning to tmp_path/plan.json."""
    return subprocess.run(
        [
            sys.executable,
            "manage.py",
            "propose",
            "--snapshot",
            str(write(tmp_path, data)),
            "--output",
            str(tmp_path / "plan.json"),
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("case", BAD_CASES)
def test_it_exits_non_zero_with_one_line_from_the_shell(tmp_path: Path, case: str) -> None:
    data, message = BAD_CASES[case]
    plan_path = tmp_path / "plan.json"
    proc = propose_in_a_shell(tmp_path, data)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], proc.stderr
    assert proc.stdout == ""
    assert not plan_path.exists()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--brokers", "x"], "--brokers expects comma-separated broker ids"),
        (["--disks", "3"], "--disks expects comma-separated BROKER:DIR"),
        (["--disks", "x:/data/a"], "--disks expects comma-separated BROKER:DIR"),
        (["--mode", "remove-disks", "--disks", "1:/d"], "lists the brokers' log dirs"),
        (["--threshold", "high"], "--threshold expects VALUE or GOAL=VALUE"),
        (["--mode", "sideways"], "unknown mode 'sideways'"),
        (["--goals", "cpu"], "unknown goal 'cpu'"),
        (["--capacity-threshold", "1.5"], "capacity threshold must be in"),
    ],
)
def test_it_rejects_bad_arguments(tmp_path: Path, extra: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run(
            "--snapshot",
            str(write(tmp_path, skewed())),
            "--output",
            str(tmp_path / "plan.json"),
            *extra,
        )
    assert not (tmp_path / "plan.json").exists()


def test_it_reports_a_missing_snapshot_file(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="cannot read snapshot"):
        run("--snapshot", str(tmp_path / "nope.json"), "--output", str(tmp_path / "p.json"))


def test_it_keeps_an_existing_plan_when_a_run_fails(tmp_path: Path) -> None:
    plan_path = tmp_path / "plan.json"
    plan_path.write_text('{"version": 1, "partitions": []}')
    with pytest.raises(CommandError):
        run("--snapshot", str(write(tmp_path, "not json")), "--output", str(plan_path))
    assert plan_path.read_text() == '{"version": 1, "partitions": []}'


@pytest.mark.parametrize(
    ("extra", "status"),
    [(["--mode", "sideways"], 2), (["--brokers", "x"], 2), (["--threshold", "high"], 2), ([], 1)],
)
def test_it_exits_2_on_a_usage_error_and_1_otherwise(
    tmp_path: Path, extra: list[str], status: int
) -> None:
    # [] : a well-formed command on a snapshot the planner refuses (a data error).
    data = skewed() if extra else BAD_CASES["unknown broker"][0]
    proc = propose_in_a_shell(tmp_path, data, *extra)
    assert proc.returncode == status, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "plan.json").exists()


def test_it_prints_the_hard_goals_an_overloaded_cluster_leaves_unmet(tmp_path: Path) -> None:
    out, _ = run(
        "--snapshot", str(write(tmp_path, overloaded_snapshot())), "--output", str(tmp_path / "p")
    )
    unmet = {ln.split(":")[0]: ln for ln in out.splitlines() if ln.startswith("UNMET hard goal")}
    line = unmet["UNMET hard goal network-in-capacity"]
    assert "violation 70 -> 30, 3 offender(s)" in line
    assert "worst: broker 1 above the band: 0.90 × capacity, band up to 0.80" in line
    assert "could not fix 1 partition(s), e.g. big-0" in out
    assert len(out.splitlines()) <= 24  # still one screen


def test_it_prints_no_unmet_hard_goal_when_all_hold(tmp_path: Path) -> None:
    out, _ = run("--snapshot", str(write(tmp_path, skewed())), "--output", str(tmp_path / "p.json"))
    assert "UNMET" not in out


def test_it_empties_a_disk_and_prints_the_disks_figures(tmp_path: Path) -> None:
    snap = skewed()
    for b in snap["brokers"]:
        b["log_dirs"] = [{"path": p, "total": 5e11, "usable": 5e11} for p in ("/a", "/b")]
    for p in snap["partitions"]:
        p["log_dirs"] = ["/a"]
    plan_path = tmp_path / "plan.json"
    out, _ = run(
        "--snapshot",
        str(write(tmp_path, snap)),
        "--output",
        str(plan_path),
        "--mode",
        "remove-disks",
        "--disks",
        "1:/a",
    )
    plan = json.loads(plan_path.read_text())

    assert validate_plan(plan, snap) == []
    # every replica of broker 1's /a goes to /b or to another broker's dir
    for e in plan["partitions"]:
        assert e["log_dirs"][e["replicas"].index(1)] == "/b" if 1 in e["replicas"] else True
    assert len(plan["partitions"]) == 12
    assert "disks (a dir against its broker's mean)" in out
