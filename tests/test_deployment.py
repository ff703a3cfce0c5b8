"""docker-compose.yml stays a valid compose file consistent with the settings.

There is no Docker engine here, so we check what `docker compose config` would:
it parses, every service has an image or build, dependencies exist, and the
environment it gives the app is the one balancer_site/settings.py reads.
"""

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
COMPOSE = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
SETTINGS_SOURCE = (ROOT / "balancer_site" / "settings.py").read_text()


def test_it_declares_the_whole_deployment():
    services = COMPOSE["services"]
    for name in ("controller", "broker-1", "broker-2", "broker-3", "redis", "postgres"):
        assert name in services
    for name in ("web", "worker", "beat", "spark-master", "spark-worker"):
        assert name in services
    for name, service in services.items():
        assert "image" in service or "build" in service, name
        for dependency in service.get("depends_on", []):
            assert dependency in services, f"{name} depends on unknown {dependency}"


def test_it_uses_the_official_kafka_image_in_kraft_mode():
    kafka = [
        s for n, s in COMPOSE["services"].items() if n == "controller" or n.startswith("broker")
    ]
    pom = (ROOT / "scripts" / "kafka" / "pom.xml").read_text()
    version = re.search(r"<kafka.version>([^<]+)</kafka.version>", pom)
    for service in kafka:
        assert service["image"].startswith("apache/kafka:")
        if version:
            assert service["image"].endswith(f":-{version.group(1)}}}")
        env = service["environment"]
        assert env["KAFKA_PROCESS_ROLES"] in {"controller", "broker"}
        assert env["KAFKA_CONTROLLER_QUORUM_VOTERS"] == "100@controller:9093"
    racks = {s["environment"].get("KAFKA_BROKER_RACK") for s in kafka} - {None}
    assert racks == {"a", "b", "c"}


def test_it_gives_the_app_only_settings_it_reads():
    for name in ("web", "worker", "beat"):
        env = COMPOSE["services"][name]["environment"]
        for key in env:
            assert f'"{key}"' in SETTINGS_SOURCE, f"{name}: settings.py never reads {key}"
        assert env["DJANGO_DEBUG"] == "0"
        assert env["DATABASE_URL"].startswith("postgres://")
        assert env["SPARK_MASTER"] == "spark://spark-master:7077"
        brokers = env["KAFKA_BOOTSTRAP_SERVERS"].split(",")
        assert all(b.split(":")[0] in COMPOSE["services"] for b in brokers)


def test_it_keeps_secrets_out_of_the_file():
    text = (ROOT / "docker-compose.yml").read_text()
    assert "${DJANGO_SECRET_KEY:?" in text and "${POSTGRES_PASSWORD:?" in text


def _queues_consumed(commands: list[list[str]]) -> set[str]:
    queues: set[str] = set()
    for command in commands:
        if "worker" in command and "-Q" in command:
            queues.update(command[command.index("-Q") + 1].split(","))
    return queues


def test_it_runs_a_worker_for_every_routed_queue():
    from django.conf import settings

    routed = {"celery"} | {r["queue"] for r in settings.CELERY_TASK_ROUTES.values()}
    compose = [s["command"] for s in COMPOSE["services"].values() if "command" in s]
    # scripts/run: each `celery -A ... worker ... -Q QUEUE` command line, continuations joined.
    run = (ROOT / "scripts" / "run").read_text().replace("\\\n", " ")
    run_commands = [line.split() for line in run.splitlines() if "celery -A" in line]
    assert _queues_consumed(compose) >= routed
    assert _queues_consumed(run_commands) >= routed
