"""`manage.py propose` on deeply nested or out-of-range input exits 1 with one clear
line and writes nothing (unchecked, 3,000 levels of
nesting end in a RecursionError traceback; a 10³⁰ broker id in an OverflowError)."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from apps.core.bounds import JSON_DEPTH_MAX

ROOT = Path(__file__).resolve().parents[2]
HUGE = "1" + "0" * 30

SNAPSHOTS = {
    "nested 3000 deep": "[" * 3000 + "]" * 3000,
    "nested past the limit": '{"brokers": ' + "[" * JSON_DEPTH_MAX + "]" * JSON_DEPTH_MAX + "}",
    "huge broker id": '{"brokers": [{"id": ' + HUGE + '}], "partitions": []}',
    "huge partition": '{"brokers": [{"id": 1}], "partitions": [{"topic": "t", "partition": '
    + HUGE
    + ', "replicas": [1]}]}',
    "huge load": '{"brokers": [{"id": 1}], "partitions": [{"topic": "t", "partition": 0, '
    '"replicas": [1], "load": {"bytes_in": 1' + "0" * 400 + "}}]}",
}
MESSAGES = {
    "nested 3000 deep": f"nests deeper than {JSON_DEPTH_MAX} levels",
    "nested past the limit": f"nests deeper than {JSON_DEPTH_MAX} levels",
    "huge broker id": "'id' must be an integer from 0 to 2147483647",
    "huge partition": "'partition' must be an integer from 0 to 2147483647",
    "huge load": "load.bytes_in must be a finite number",
}


@pytest.mark.parametrize("name", list(SNAPSHOTS))
def test_it_refuses_bad_input_with_a_clear_message(tmp_path, name):
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(SNAPSHOTS[name])
    output = tmp_path / "plan.json"

    with pytest.raises(CommandError) as refused:
        call_command("propose", "--snapshot", str(snapshot), "--output", str(output))

    assert refused.value.returncode == 1
    assert MESSAGES[name] in str(refused.value)
    assert not output.exists()


def test_it_exits_1_with_one_line_and_no_traceback(tmp_path):
    snapshot = tmp_path / "snapshot.json"
    snapshot.write_text(SNAPSHOTS["nested 3000 deep"])

    done = subprocess.run(
        [sys.executable, "manage.py", "propose", "--snapshot", str(snapshot), "--output", "-"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert done.returncode == 1, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert MESSAGES["nested 3000 deep"] in done.stderr
