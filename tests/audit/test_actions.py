"""Every audit action is a named constant, recorded somewhere in the product and listed in
docs/lifecycle.md; none is spelled as a bare string or built by f-string at its producer."""

from __future__ import annotations

import ast
import re
from enum import StrEnum
from pathlib import Path

from apps.access import actions as access_actions
from apps.audit import actions as audit_actions
from apps.clusters import actions as cluster_actions
from apps.notifications import actions as notification_actions
from apps.plans import actions as plan_actions

REPO = Path(__file__).resolve().parents[2]
MODULES = (plan_actions, cluster_actions, audit_actions, notification_actions, access_actions)


def _enums() -> dict[str, type[StrEnum]]:
    return {
        name: value
        for module in MODULES
        for name, value in vars(module).items()
        if isinstance(value, type)
        and issubclass(value, StrEnum)
        and value.__module__ == module.__name__
    }


def _mappings() -> dict[str, dict]:
    """The modules' dicts whose values are actions (e.g. EXECUTION_ENDED)."""
    return {
        name: value
        for module in MODULES
        for name, value in vars(module).items()
        if isinstance(value, dict) and value and all(isinstance(v, StrEnum) for v in value.values())
    }


def _action_arguments() -> list[tuple[Path, ast.expr]]:
    """Every `action=<expr>` passed to a call in apps/, outside the action modules."""
    found = []
    for path in sorted((REPO / "apps").rglob("*.py")):
        if "migrations" in path.parts or path.name == "actions.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                found += [(path, k.value) for k in node.keywords if k.arg == "action"]
    return found


def _produced() -> set[str]:
    enums, mappings = _enums(), _mappings()
    produced: set[str] = set()
    for _, expr in _action_arguments():
        for node in ast.walk(expr):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                enum = enums.get(node.value.id)
                if enum is not None and node.attr in enum.__members__:
                    produced.add(enum[node.attr].value)
            if isinstance(node, ast.Name) and node.id in mappings:
                produced |= {v.value for v in mappings[node.id].values()}
    return produced


def test_it_records_every_action_somewhere() -> None:
    every = {member.value for enum in _enums().values() for member in enum}
    assert len(every) > 50
    assert every - _produced() == set()


def test_no_producer_spells_an_action_as_a_string() -> None:
    spelled = [
        f"{path.relative_to(REPO)}:{expr.lineno}"
        for path, expr in _action_arguments()
        for node in ast.walk(expr)
        if isinstance(node, ast.JoinedStr)
        or (isinstance(node, ast.Constant) and isinstance(node.value, str) and "." in node.value)
    ]
    assert spelled == []


def test_the_docs_list_every_action() -> None:
    docs = (REPO / "docs" / "lifecycle.md").read_text()
    section = docs[docs.index("## Audit") :]
    listed = set(re.findall(r"`([a-z_]+\.[a-z_]+)`", section))
    every = {member.value for enum in _enums().values() for member in enum}
    assert every - listed == set()


def test_every_refused_api_action_has_its_audit_name() -> None:
    from apps.api.plans import views

    verbs = {
        cls.action
        for cls in vars(views).values()
        if isinstance(cls, type) and isinstance(getattr(cls, "action", None), str) and cls.action
    }
    assert verbs and verbs <= set(plan_actions.PLAN_REFUSED)
