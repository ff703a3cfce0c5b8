"""Settings tell the truth: read from the environment in one place, listed in the README,
and the periodic-task expiry they describe is one Celery really applies."""

from __future__ import annotations

import ast
import math
import re
import runpy
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETTINGS = ROOT / "balancer_site" / "settings.py"
ENV_READERS = {"env.bool", "env.int", "env.float"}

# Environment variables code outside settings.py may read: they are Spark's own and
# only handed on to (or detect) a Spark process; none of them is a setting.
SPARK_OWN = {
    ("apps/metrics/services/spark_submit.py", "PYTHONPATH"),
    ("apps/metrics/services/spark_submit.py", "PYSPARK_PYTHON"),
    ("apps/metrics/services/spark_submit.py", "PYSPARK_DRIVER_PYTHON"),
    ("spark_jobs/session.py", "PYSPARK_GATEWAY_PORT"),
}


def _is_os_environ(node: ast.AST) -> bool:
    return ast.unparse(node) == "os.environ"


def environment_reads(tree: ast.AST) -> set[str]:
    """Names of the environment variables a module reads, in every way this repo does."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            args = [a for a in node.args if isinstance(a, ast.Constant)]
            if func in {"os.environ.get", "os.getenv", *ENV_READERS} and args:
                names.add(args[0].value)
            names.update(
                k.value.value
                for k in node.keywords
                if k.arg == "env" and isinstance(k.value, ast.Constant)  # dj_database_url
            )
        elif isinstance(node, ast.Subscript) and _is_os_environ(node.value):
            if isinstance(node.slice, ast.Constant):
                names.add(node.slice.value)
        elif isinstance(node, ast.Compare) and any(_is_os_environ(c) for c in node.comparators):
            if isinstance(node.left, ast.Constant):
                names.add(node.left.value)
    return names


def readme_settings() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([A-Z0-9_]+)` \|", section, flags=re.MULTILINE)


def test_it_lists_every_setting_read_from_the_environment_in_the_readme():
    read = environment_reads(ast.parse(SETTINGS.read_text()))
    listed = readme_settings()

    assert len(read) > 30, "the parser no longer finds the settings"
    assert sorted(read - set(listed)) == [], "read in settings.py, missing from the README"
    assert sorted(set(listed) - read) == [], "in the README, never read by settings.py"
    assert len(listed) == len(set(listed)), "listed twice"


def test_it_reads_settings_only_in_settings_py():
    offenders = []
    for path in [*(ROOT / "apps").rglob("*.py"), *(ROOT / "spark_jobs").rglob("*.py")]:
        rel = path.relative_to(ROOT).as_posix()
        tree = ast.parse(path.read_text())
        offenders += [
            (rel, name) for name in environment_reads(tree) if (rel, name) not in SPARK_OWN
        ]
        offenders += [
            (rel, ast.unparse(node))
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and ast.unparse(node.func) == "getattr"
            and ast.unparse(node.args[0]) == "settings"
        ]

    assert offenders == [], "read it in balancer_site/settings.py and list it in the README"


def test_it_finds_environment_reads_of_every_form():
    tree = ast.parse(
        'os.environ.get("A")\nenv.int("B", 1)\nos.environ["C"]\n"D" in os.environ\n'
        'dj_database_url.config(env="E")\nos.getenv("F")\nos.environ.setdefault("G", "")\n'
    )

    assert environment_reads(tree) == {"A", "B", "C", "D", "E", "F"}


def load_settings(monkeypatch: pytest.MonkeyPatch, **environ: str) -> dict:
    """settings.py run afresh with these environment variables set."""
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS))


@pytest.mark.parametrize(
    ("name", "value", "expected"),
    [
        ("METRICS_WINDOW_SECONDS", "abc", "integer"),
        ("EXECUTOR_MAX_MOVES_CLUSTER", "2.5", "integer"),
        ("KAFKA_REQUEST_TIMEOUT", "soon", "number"),
        ("CELERY_TASK_ALWAYS_EAGER", "maybe", "boolean"),
    ],
)
def test_it_names_the_variable_and_the_type_when_a_setting_is_malformed(
    monkeypatch, name, value, expected
):
    with pytest.raises(ValueError, match=rf'"{name}" invalid: Not a valid {expected}'):
        load_settings(monkeypatch, **{name: value})


def test_it_reads_typed_settings_and_keeps_their_defaults(monkeypatch):
    for name in environment_reads(ast.parse(SETTINGS.read_text())):
        monkeypatch.delenv(name, raising=False)

    defaults = load_settings(monkeypatch)
    given = load_settings(
        monkeypatch,
        METRICS_WINDOW_SECONDS=" 30 ",
        KAFKA_REQUEST_TIMEOUT="2.5",
        CELERY_TASK_ALWAYS_EAGER="on",
        METRICS_AGGREGATE_AFTER_SAMPLE="0",
    )

    assert (defaults["METRICS_WINDOW_SECONDS"], given["METRICS_WINDOW_SECONDS"]) == (60, 30)
    assert (defaults["KAFKA_REQUEST_TIMEOUT"], given["KAFKA_REQUEST_TIMEOUT"]) == (10.0, 2.5)
    assert (defaults["CELERY_TASK_ALWAYS_EAGER"], given["CELERY_TASK_ALWAYS_EAGER"]) == (
        False,
        True,
    )
    assert defaults["METRICS_AGGREGATE_AFTER_SAMPLE"] is True
    assert given["METRICS_AGGREGATE_AFTER_SAMPLE"] is False
    assert defaults["AXES_COOLOFF_TIME"].total_seconds() == 15 * 60


@pytest.mark.django_db
def test_it_expires_each_periodic_task_when_its_next_run_is_due(settings):
    from celery import current_app
    from django_celery_beat.schedulers import ModelEntry

    assert settings.CELERY_BEAT_SCHEDULE
    for name, fields in settings.CELERY_BEAT_SCHEDULE.items():
        # What django-celery-beat's scheduler does with each entry on start.
        entry = ModelEntry.from_entry(name, app=current_app, **fields)

        assert entry.options.get("expires") == math.ceil(fields["schedule"]), name
