"""Shared fixtures: the real local Kafka dev cluster and Redis (scripts/dev_cluster/),
and users in each role group.

No mocks: tests that request the cluster fixtures talk to real JVM brokers and a real
Redis. Django configuration lives in pyproject.toml, not here.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from dev_cluster import DevCluster, jbod_cluster_args, kafka39_cluster_args, quorum_cluster_args
from devkit.users import user_make

from apps.clusters.models import Cluster
from tests.support.db_guard import transactional_tests_guard
from tests.support.db_selection import database_tests_select
from tests.support.factories import cluster_make
from tests.support.network_guard import GUARD, network_guard_install
from tests.support.own_stack_guard import own_stack_tests_guard


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--database-only",
        action="store_true",
        help="run only the tests that use the database (scripts/test-postgres's pass)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    transactional_tests_guard(items)
    own_stack_tests_guard(items)
    if config.getoption("database_only"):
        database_tests_select(config, items)


@pytest.fixture(scope="session", autouse=True)
def _network_guard_installed() -> None:
    """Every Kafka and Spark call of the product checks that no transaction is open."""
    network_guard_install()


@pytest.fixture(autouse=True)
def no_transaction_across_network(_network_guard_installed) -> Iterator[None]:
    """Fails the test when the product made a network call inside a transaction, even
    if it caught the guard's error (support/network_guard.py)."""
    GUARD.take()
    yield
    violations = GUARD.take()
    if violations:
        pytest.fail("\n\n".join(violations), pytrace=False)


@pytest.fixture(scope="session")
def kafka_cluster() -> Iterator[DevCluster]:
    """The 3-broker KRaft dev cluster, up for the whole session.

    Reuses a cluster that is already running (e.g. from `make run`) and leaves it running;
    one this session had to start is stopped at the end (unless another test session in
    the same tree still uses it).
    """
    cluster = DevCluster()
    with cluster.use(kafka=True, redis=False):
        yield cluster


@pytest.fixture(scope="module")
def kafka_quorum_cluster() -> Iterator[DevCluster]:
    """A second dev cluster with three KRaft controllers (a real quorum), for controller faults.

    Its own run dir (`.run/kafka-quorum`, or `$KAFKA_DEV_DIR-quorum`) and ports (broker base
    and controller port + 10), so it never disturbs `kafka_cluster`; same lease rules, but
    module-scoped: one it started is stopped after the module, so a full run does not keep
    three clusters up at once.
    """
    cluster = DevCluster(**quorum_cluster_args())
    with cluster.use(kafka=True, redis=False):
        yield cluster


@pytest.fixture(scope="module")
def kafka39_cluster() -> Iterator[DevCluster]:
    """A second dev cluster running the last Kafka 3.9.x release (the 3.x line users run).

    Its own run dir (`.run/kafka-3.9`, or `$KAFKA_DEV_DIR-3.9`) and ports (+ 20); same
    lease rules as `kafka_quorum_cluster` (module-scoped).
    """
    cluster = DevCluster(**kafka39_cluster_args())
    with cluster.use(kafka=True, redis=False):
        yield cluster


@pytest.fixture(scope="module")
def kafka_jbod_cluster() -> Iterator[DevCluster]:
    """A second dev cluster whose brokers have two log dirs each (JBOD, `--log-dirs 2`).

    Its own run dir (`.run/kafka-jbod`, or `$KAFKA_DEV_DIR-jbod`) and ports (+ 30); same
    lease rules as `kafka_quorum_cluster` (module-scoped).
    """
    cluster = DevCluster(**jbod_cluster_args())
    with cluster.use(kafka=True, redis=False):
        yield cluster


@pytest.fixture(scope="session")
def spark() -> Iterator:
    """ONE local SparkSession for the whole test session (local[2] with the Kafka source,
    UI off, few shuffle partitions). Tests must not stop it: a SparkSession is a
    process-wide singleton, so a second "session" would be this one."""
    from spark_jobs.session import spark_session_build

    session = spark_session_build(
        app_name="kafka-balancer-tests",
        master="local[2]",
        extra_conf={"spark.sql.shuffle.partitions": "2", "spark.driver.memory": "1g"},
    )
    yield session
    session.stop()


@pytest.fixture(scope="session")
def redis_server() -> Iterator[str]:
    """URL of a Redis answering PING (REDIS_URL, default redis://127.0.0.1:6379/0).

    Reuses a running Redis; one this session started is stopped at the end.
    """
    cluster = DevCluster()
    with cluster.use(kafka=False, redis=True):
        yield cluster.redis_url


@pytest.fixture
def restore_brokers(kafka_cluster: DevCluster) -> Iterator[DevCluster]:
    """For tests that stop brokers: afterwards, restart every broker that was running.

    Runs even when the test fails, so one broken test can't leave the cluster degraded
    for the tests after it.
    """
    before = [b for b in kafka_cluster.broker_ids if kafka_cluster.node_pid(b) is not None]
    yield kafka_cluster
    for broker_id in before:
        # No-op for a running broker, but still waits until metadata lists it again.
        kafka_cluster.start_broker(broker_id)


# --- cluster models (no Kafka) --------------------------------------------------------


@pytest.fixture
def cluster(db) -> Cluster:
    """ "prod", synced from factories.SKEWED: orders on brokers 1 and 2, audit-log on 1
    and 3, so broker 3 is nearly empty and a full rebalance has something to do."""
    return cluster_make()


@pytest.fixture
def empty_cluster(db) -> Cluster:
    """ "prod", registered but never synced: no brokers, topics or partitions."""
    return Cluster.objects.create(name="prod", bootstrap_servers="127.0.0.1:1")


# --- users in each role group --------------------------------------------------------


def _user_in(name: str, *groups: str):
    """A fixture: a new user `name` in the role `groups`."""

    @pytest.fixture
    def user(db):
        return user_make(name, *groups)

    return user


viewer = _user_in("vic", "viewer")
operator = _user_in("olga", "operator")
approver = _user_in("anna", "approver")
admin_member = _user_in("ada", "admin")  # pytest-django's admin_user is a superuser instead
nobody = _user_in("nora")  # signed in, but in no role group


class _NoLogSizes:
    """Stands in for a cluster no unit test can reach: its log sizes are unknown."""

    def replica_sizes(self):
        from apps.plans.kafka_ops import KafkaOpError

        raise KafkaOpError("no Kafka in a unit test")


@pytest.fixture(autouse=True)
def _empty_cache():
    """Live answers are cached per cluster state (metrics.selectors.stamped_answer_get);
    a test's cluster may get a primary key an earlier test's cluster had."""
    from django.core.cache import cache

    cache.clear()


@pytest.fixture(autouse=True)
def _no_live_log_sizes(request, monkeypatch):
    """Plans read their replicas' log sizes when proposed and approved; a unit test's
    cluster ("fake:9092") would make each read wait for kafka-python's bootstrap
    timeout. Integration tests read the real logs; unit tests that want sizes
    patch in their own fake."""
    if request.node.get_closest_marker("integration"):
        return
    from apps.plans.services import estimate, sizes

    def resolve(*, cluster, kafka=None):
        return kafka if kafka is not None else _NoLogSizes()

    monkeypatch.setattr(sizes, "kafka_ops_resolve", resolve)
    monkeypatch.setattr(estimate, "kafka_ops_resolve", resolve)


@pytest.fixture(autouse=True)
def _no_live_log_dirs(request, monkeypatch):
    """A unit test's sync reads a fake cluster state; its log dirs would be asked of the
    cluster's address through kafka-python, which waits seconds to give up bootstrapping.
    They are left unknown; tests of the log dirs patch in their own answer."""
    if request.node.get_closest_marker("integration"):
        return
    from apps.clusters import services

    monkeypatch.setattr(services, "log_dirs_read", lambda *, cluster: (None, ""))
