"""AlterReplicaLogDirs through kafka-python: what is sent and how answers are named."""

from contextlib import contextmanager

from kafka import TopicPartitionReplica
from kafka import errors as kafka_errors

from apps.kafka_layer import kafka_python_adapter
from apps.kafka_layer.kafka_python_adapter import replica_log_dirs_alter


class _Admin:
    def __init__(self, answers):
        self.answers = answers
        self.sent = None

    def alter_replica_log_dirs(self, request):
        self.sent = request
        return self.answers


def test_it_sends_each_replicas_dir_and_names_the_errors(monkeypatch):
    admin = _Admin(
        {
            TopicPartitionReplica("t", 0, 1): kafka_errors.NoError,
            TopicPartitionReplica("t", 0, 3): kafka_errors.ReplicaNotAvailableError,
        }
    )

    @contextmanager
    def opened(**_kwargs):
        yield admin

    monkeypatch.setattr(kafka_python_adapter, "admin_client_open", opened)
    targets = {("t", 0, 1): "/d/b", ("t", 0, 3): "/d/a", ("u", 2, 2): "/d/a"}

    answered = replica_log_dirs_alter(bootstrap_servers="x:1", targets=targets)

    assert admin.sent == {
        TopicPartitionReplica("t", 0, 1): "/d/b",
        TopicPartitionReplica("t", 0, 3): "/d/a",
        TopicPartitionReplica("u", 2, 2): "/d/a",
    }
    assert answered == {
        ("t", 0, 1): None,
        ("t", 0, 3): "ReplicaNotAvailableError",
        ("u", 2, 2): "no response",
    }


def test_it_sends_nothing_for_no_targets(monkeypatch):
    monkeypatch.setattr(kafka_python_adapter, "admin_client_open", None)
    assert replica_log_dirs_alter(bootstrap_servers="x:1", targets={}) == {}
