"""Render docs/faults.md's fault-matrix table from the results tests/faults writes.

    .venv/bin/python -m pytest tests/faults -q        # writes .run/faults/results.json
    .venv/bin/python bench/faults_table.py            # rewrites the table, prints it
    .venv/bin/python bench/faults_table.py --results R.json --doc docs/faults.md

Each row is one case of the matrix as its test recorded it: survived (the test
passed), time to recover (seconds from the fault until the system was whole again, as
the case defines it) and the acks=all records acked, read back and lost alongside.
Faults in MATRIX that have no result yet are listed as "not run".
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(os.environ.get("FAULTS_RESULTS", ROOT / ".run" / "faults" / "results.json"))
BEGIN, END = "<!-- faults-table:begin -->", "<!-- faults-table:end -->"

# The matrix of issue 13, in the order the table lists it; the keys are the `fault`
# names the tests record.
MATRIX = [
    "target broker SIGKILLed mid-move",
    "source broker SIGKILLed mid-move",
    "active controller SIGKILLed mid-execution",
    "Redis stopped and restarted",
    "database restarted mid-execution (PostgreSQL)",
    "executing worker SIGKILLed",
    "web server (Daphne) restarted",
]


def table_render(rows: dict[str, dict]) -> str:
    lines = [
        "| fault | survived | time to recover | acked | read | lost | recovery means |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for fault in MATRIX + sorted(set(rows) - set(MATRIX)):
        row = rows.get(fault)
        if row is None:
            lines.append(f"| {fault} | not run | | | | | |")
            continue
        recover = row.get("recover_s")
        lines.append(
            "| {fault} | {survived} | {recover} | {acked} | {read} | {lost} | {means} |".format(
                fault=fault,
                survived="yes" if row.get("survived") else "**no**",
                recover="" if recover is None else f"{recover:.1f} s",
                acked=row.get("acked", ""),
                read=row.get("read", ""),
                lost=row.get("lost", ""),
                means=row.get("recovery", ""),
            )
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "faults.md")
    args = parser.parse_args()
    rows = json.loads(args.results.read_text()) if args.results.exists() else {}
    table = table_render(rows)
    doc = args.doc.read_text()
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    args.doc.write_text(f"{head}{BEGIN}\n{table}\n{END}{tail}")
    print(table)


if __name__ == "__main__":
    main()
