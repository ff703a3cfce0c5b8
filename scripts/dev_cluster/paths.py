"""Where the dev cluster's inputs live in the repository (poms, logging config, jar cache)."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SCRIPTS_DIR = REPO_ROOT / "scripts"
KAFKA_POM = SCRIPTS_DIR / "kafka" / "pom.xml"
LOG4J2_CONFIG = SCRIPTS_DIR / "kafka" / "log4j2.properties"
FETCH_JARS = SCRIPTS_DIR / "fetch-kafka-jars"
CACHE_DIR = REPO_ROOT / ".cache" / "kafka"
LIBS_DIR = CACHE_DIR / "libs"
LIBS_STAMP = CACHE_DIR / "libs.sha256"
DEFAULT_RUN_DIR = REPO_ROOT / ".run" / "kafka"
DEFAULT_REDIS_DIR = REPO_ROOT / ".run" / "redis"
