"""plotly.js and the site's assets are served by the app itself, also with DEBUG off."""

import pytest
from django.core.management import call_command
from django.test import override_settings


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    root = tmp_path_factory.mktemp("static")
    with override_settings(STATIC_ROOT=root):
        call_command("collectstatic", "--noinput", verbosity=0)
    return root


def test_it_collects_plotly_from_the_installed_package(collected):
    bundle = collected / "plotly" / "plotly.min.js"
    assert bundle.stat().st_size > 1_000_000


@pytest.mark.django_db
def test_it_serves_static_files_with_debug_off(collected, client, settings):
    settings.DEBUG = False
    with override_settings(STATIC_ROOT=collected, WHITENOISE_AUTOREFRESH=False):
        from whitenoise.middleware import WhiteNoiseMiddleware

        # WhiteNoise scans STATIC_ROOT when the middleware is built.
        middleware = WhiteNoiseMiddleware(lambda request: None)
        assert "/static/plotly/plotly.min.js" in middleware.files
