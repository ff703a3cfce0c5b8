"""docs/security.md's threat model names, for every row, tests that exist."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_row_of_the_threat_model_names_tests_that_exist() -> None:
    doc = (REPO / "docs" / "security.md").read_text()
    table = doc[doc.index("## Threat model") :].split("\n## ", 1)[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) > 10
    for row in rows[1:]:  # the first is the header
        paths = re.findall(r"`(tests/[^`]+)`", row.rsplit("|", 2)[-2])
        assert paths, f"no test named in: {row}"
        for path in paths:
            assert list(REPO.glob(path)), f"{path} names no file"
