"""The production image gets the runtime set only, every file checked against a pinned
hash: test and dev tools live in requirements-dev.txt, nothing is pinned twice, and the
runtime set holds everything the product imports."""

import ast
import re
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RUNTIME = ROOT / "requirements.txt"
DEV = ROOT / "requirements-dev.txt"
TOOLS = {
    "pytest",
    "pytest-django",
    "pytest-timeout",
    "playwright",
    "ruff",
    "hypothesis",
    "import-linter",
    "pip-tools",
}
PIN = re.compile(r"^([A-Za-z0-9_.\-\[\],]+)==(\S+)")


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name.split("[")[0]).lower()


def requirements(path: Path) -> list[tuple[str, str, list[str]]]:
    """(name, version, hashes) per requirement, continuation lines joined."""
    text = path.read_text().replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line or line.startswith("-"):
            continue
        match = PIN.match(line)
        assert match, f"{path.name}: not pinned with ==: {line}"
        found.append((normalized(match[1]), match[2], re.findall(r"--hash=sha256:\w{64}", line)))
    return found


def test_it_keeps_test_and_dev_tools_out_of_the_runtime_set():
    runtime = {name for name, _, _ in requirements(RUNTIME)}
    assert not runtime & TOOLS
    assert TOOLS <= {name for name, _, _ in requirements(DEV)}


def test_it_pins_every_requirement_once_with_hashes():
    for path in (RUNTIME, DEV):
        names = [name for name, _, _ in requirements(path)]
        assert len(names) == len(set(names)), f"{path.name} pins a package twice"
        unhashed = [name for name, _, hashes in requirements(path) if not hashes]
        assert unhashed == [], f"{path.name}: no hash for {unhashed}"
    # The dev set installs the runtime set's very versions.
    dev = {name: version for name, version, _ in requirements(DEV)}
    assert all(dev.get(name) == version for name, version, _ in requirements(RUNTIME))


def test_it_builds_the_image_from_the_runtime_set_alone():
    dockerfile = (ROOT / "Dockerfile").read_text()
    installs = [line for line in dockerfile.splitlines() if "pip install" in line]
    assert installs == ["RUN pip install --no-cache-dir --require-hashes -r requirements.txt"]
    assert "requirements-dev" not in dockerfile


def test_it_holds_everything_the_product_imports():
    runtime = {name for name, _, _ in requirements(RUNTIME)}
    distributions = packages_distributions()
    missing = set()
    for folder in ("apps", "balancer_site", "spark_jobs"):
        for source in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(source.read_text())):
                if isinstance(node, ast.Import):
                    modules = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules = [node.module]
                else:
                    continue
                for module in modules:
                    for dist in distributions.get(module.split(".")[0], []):
                        if normalized(dist) not in runtime:
                            missing.add((normalized(dist), str(source.relative_to(ROOT))))
    assert not missing, sorted(missing)
