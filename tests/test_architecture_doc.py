"""docs/architecture.md matches the folders: it names every package of apps/, and every
path it names exists."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOC = (REPO / "docs" / "architecture.md").read_text()


def test_it_names_every_package_of_apps() -> None:
    packages = sorted(p.parent.name for p in (REPO / "apps").glob("*/__init__.py"))
    assert len(packages) >= 10
    assert [p for p in packages if f"apps/{p}" not in DOC] == []


def test_every_path_it_names_exists() -> None:
    named = set(re.findall(r"\b((?:apps|spark_jobs|balancer_site|docs|tests)/[\w/.]*\w)", DOC))
    # Short forms inside the data-path diagram are relative to apps/.
    named |= {
        f"apps/{m}" for m in re.findall(r"\b((?:metrics|plans|clusters|balancer)/[\w/.]*\w)", DOC)
    }
    missing = [
        path
        for path in sorted(named)
        if not (REPO / path).exists() and not (REPO / path.replace("apps/*", "apps/plans")).exists()
    ]
    assert named and missing == []
