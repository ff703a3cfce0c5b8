"""The production profile docker-compose.yml gives the app passes `manage.py check
--deploy` without a warning: HTTPS redirect, HSTS, secure cookies behind the TLS proxy."""

import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import yaml
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
VARIABLE = re.compile(r"\$\{(\w+)(?::([-?])([^}]*))?\}")


def compose_app_environment() -> dict[str, str]:
    """The web service's environment as compose would fill it, secrets made up here."""
    made_up = {
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(60),
        "BALANCER_SECRET_KEYS": Fernet.generate_key().decode(),
        "POSTGRES_PASSWORD": secrets.token_urlsafe(16),
    }

    def fill(match: re.Match) -> str:
        name, kind, default = match.groups()
        if kind == "?":
            return made_up[name]
        return default or ""

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    environment = compose["services"]["web"]["environment"]
    return {key: VARIABLE.sub(fill, str(value)) for key, value in environment.items()}


def test_it_passes_check_deploy_with_the_production_profile():
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("DJANGO_", "SIGNIN_", "TRUSTED_"))
    }
    env.update(compose_app_environment())
    assert env["DJANGO_DEBUG"] == "0"
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "no issues" in output, output
