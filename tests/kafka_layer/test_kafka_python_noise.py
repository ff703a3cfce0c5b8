"""kafka-python's connection errors: one warning per node per state change."""

import logging

from apps.kafka_layer.kafka_python_noise import QUIET_SECONDS, ConnectionNoiseFilter


def _record(message: str, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord("kafka.net.connection", level, __file__, 1, message, (), None)


def test_it_lets_one_warning_through_per_dead_node_and_mutes_the_repeats():
    now = [0.0]
    noise = ConnectionNoiseFilter(clock=lambda: now[0])
    lost = "<KafkaConnection node_id=3 broker_version=(4, 3) (disconnected)>: Connection lost"
    first = _record(lost)

    assert noise.filter(first)
    assert first.levelname == "WARNING" and "node_id=3" in first.getMessage()
    passed = []
    for _ in range(50):  # several a second, for ten seconds
        now[0] += 0.2
        passed.append(noise.filter(_record(lost)))
        passed.append(noise.filter(_record("Connection failed: 111 ECONNREFUSED")))
    assert not any(passed)
    # Another node failing is news.
    assert noise.filter(_record("Bootstrap connection to bootstrap-0 failed: refused"))


def test_it_reports_a_node_again_after_it_was_quiet():
    now = [0.0]
    noise = ConnectionNoiseFilter(clock=lambda: now[0])
    lost = "<KafkaConnection node_id=3 (disconnected)>: Connection lost"
    assert noise.filter(_record(lost))
    now[0] += QUIET_SECONDS + 1  # it came back; now it dies again
    assert noise.filter(_record(lost))


def test_it_leaves_other_records_alone():
    noise = ConnectionNoiseFilter()
    assert noise.filter(_record("Request timed out after 3000 ms", logging.WARNING))
    assert noise.filter(_record("node_id=3 connecting", logging.DEBUG))
