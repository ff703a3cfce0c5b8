"""spark_jobs/ is pure PySpark: the Django side imports it, never the other way round."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(source: str) -> set[str]:
    """Every module a file imports, at the top or inside a function."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def test_it_finds_imports_inside_functions():
    source = "import json\ndef main():\n    import django\n    from apps.metrics import x\n"

    assert imported_modules(source) == {"json", "django", "apps.metrics"}


def test_it_keeps_django_and_the_apps_out_of_the_spark_jobs():
    found = {
        (path.relative_to(ROOT).as_posix(), module)
        for path in (ROOT / "spark_jobs").rglob("*.py")
        for module in imported_modules(path.read_text())
        if module.split(".")[0] in {"django", "apps", "balancer_site"}
    }

    assert found == set()
