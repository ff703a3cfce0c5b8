"""No database transaction of the product is open across a network call (issue 25).

Installed for the whole suite (tests/conftest.py): every Kafka client the product
makes (confluent-kafka's AdminClient, Producer and Consumer, kafka-python's admin
client) and every Spark aggregation (in process or spark-submit) first checks that the
calling thread holds no open `transaction.atomic()` block — besides the one a
non-transactional test itself runs in (Django marks those `_from_testcase`). A call
made inside one is recorded and raises; the test fails at teardown even when the
product caught the error.

The product's modules are imported once and every reference they hold to a guarded
class or function is replaced, so `from confluent_kafka import Producer` in a module
is covered as well as the factories.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
import threading
import traceback
from collections.abc import Callable
from types import ModuleType
from typing import Any

from django.db import connections

PACKAGES = ("apps", "spark_jobs")


class TransactionOpenAcrossNetwork(AssertionError):
    """A network call was made inside a database transaction."""


class NetworkGuard:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.violations: list[str] = []

    def check(self, what: str) -> None:
        open_blocks = [
            block
            for connection in connections.all(initialized_only=True)
            for block in connection.atomic_blocks
            if not block._from_testcase
        ]
        if not open_blocks:
            return
        where = "".join(traceback.format_stack(limit=12)[:-2])
        message = (
            f"{what} called with {len(open_blocks)} database transaction(s) open "
            f"(no transaction may span a network call):\n{where}"
        )
        with self._lock:
            self.violations.append(message)
        raise TransactionOpenAcrossNetwork(message)

    def take(self) -> list[str]:
        with self._lock:
            taken, self.violations = self.violations, []
        return taken


GUARD = NetworkGuard()


def _guarded_class(cls: type, what: str) -> type:
    """A subclass whose public methods check the guard when looked up (C types such as
    confluent-kafka's Producer cannot have their methods replaced)."""

    def __getattribute__(self: Any, name: str) -> Any:
        value = cls.__getattribute__(self, name)
        if not name.startswith("_") and callable(value):
            GUARD.check(f"{what}.{name}")
        return value

    return type(cls.__name__, (cls,), {"__getattribute__": __getattribute__})


def _guarded_function(fn: Callable[..., Any], what: str) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        GUARD.check(what)
        return fn(*args, **kwargs)

    guarded.__wrapped__ = fn  # type: ignore[attr-defined]
    guarded.__name__ = fn.__name__
    guarded.__doc__ = fn.__doc__
    return guarded


def _product_modules() -> list[ModuleType]:
    for package_name in PACKAGES:
        package = importlib.import_module(package_name)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}."):
            if ".migrations" in info.name:
                continue
            importlib.import_module(info.name)
    return [
        module
        for name, module in list(sys.modules.items())
        if module is not None and name.split(".")[0] in PACKAGES
    ]


def network_guard_install() -> None:
    """Replace, in every product module, each reference to a network entry point by
    its guarded version. Idempotent."""
    import confluent_kafka
    import confluent_kafka.admin
    import kafka

    from apps.kafka_layer import kafka_python_adapter
    from apps.metrics.services import aggregation, spark_submit

    modules = _product_modules()
    targets: dict[int, Any] = {}
    for cls, what in (
        (confluent_kafka.admin.AdminClient, "AdminClient"),
        (confluent_kafka.Producer, "Producer"),
        (confluent_kafka.Consumer, "Consumer"),
        (kafka.KafkaAdminClient, "KafkaAdminClient"),
        (kafka_python_adapter._ClosingAdminClient, "KafkaAdminClient"),
    ):
        if not getattr(cls, "_network_guarded", False):
            guarded = _guarded_class(cls, what)
            guarded._network_guarded = True  # type: ignore[attr-defined]
            targets[id(cls)] = guarded
    for fn, what in (
        (aggregation.aggregation_run, "Spark aggregation"),
        (spark_submit.aggregation_submit, "spark-submit"),
    ):
        if not hasattr(fn, "__wrapped__"):
            targets[id(fn)] = _guarded_function(fn, what)
    for module in modules:
        for name, value in list(vars(module).items()):
            replacement = targets.get(id(value))
            if replacement is not None:
                setattr(module, name, replacement)
