"""Every page under the Content-Security-Policy in a real browser: no violation
reported, the Plotly charts drawn and the websockets connected (docs/security.md)."""

import pytest
from django.contrib.auth.models import User

from tests.browser.test_dashboard import PASSWORD, world_build
from tests.support.factories import plan_make

pytestmark = [pytest.mark.browser, pytest.mark.integration]

# Run before any page script: collects what the CSP refused, as the page sees it.
VIOLATIONS_WATCH = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI + " " + e.sourceFile
    + ":" + e.lineNumber));
"""


@pytest.fixture(scope="module")
def world(site) -> dict:
    def build() -> dict:
        built = world_build()
        User.objects.create_superuser("root", password=PASSWORD)
        from apps.clusters.models import Cluster

        plan = plan_make(Cluster.objects.get(pk=built["cluster_id"]))
        return {**built, "plan_id": plan.pk}

    return site.call(build)


def pages(world: dict) -> list[tuple[str, int, bool]]:
    """(path, Plotly charts expected at least, a live websocket expected)."""
    plan = f"/clusters/prod/plans/{world['plan_id']}/"
    return [
        ("/", 0, True),
        ("/clusters/prod/", 2, True),
        (plan, 1, True),
        ("/clusters/prod/what-if/", 0, False),
        ("/clusters/new/", 0, False),
        ("/clusters/prod/edit/", 0, False),
        ("/clusters/prod/policy/", 0, False),
        ("/clusters/prod/remove/", 0, False),
        ("/audit/", 0, False),
        ("/notifications/", 0, False),
        ("/api/docs/", 0, False),
        ("/admin/", 0, False),
    ]


def test_it_draws_every_page_under_the_csp_without_a_violation(site, world, sign_in):
    page = sign_in("root", PASSWORD)
    page.set_default_timeout(90_000)  # Plotly is 3.5 MB of script on a loaded machine
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text))
    page.add_init_script(VIOLATIONS_WATCH)
    for path, charts, live in pages(world):
        response = page.goto(site.url(path))
        policy = response.headers["content-security-policy"]
        script = policy.split("script-src ", 1)[1].split(";")[0]
        assert "'unsafe-inline'" not in script and "'unsafe-eval'" not in script, path
        page.wait_for_load_state("load")
        if charts:
            page.wait_for_function(
                f"() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= {charts}"
            )
        if live:
            page.wait_for_selector('#live-status[data-state="live"]')
        if path == "/clusters/prod/what-if/":
            page.click("#whatif-form button[type=submit]")
            page.wait_for_function(
                "() => document.querySelectorAll('.js-plotly-plot .main-svg').length >= 1"
            )
        if path == "/api/docs/":
            page.wait_for_selector(".swagger-ui .info")
        violations = page.evaluate("() => window.__cspViolations")
        refused = [t for t in console if "Content Security Policy" in t]
        assert violations == [] and refused == [], (path, violations, refused)
        assert page.js_errors == [], (path, page.js_errors)
