"""A tiny OpenID Connect provider (django-oidc-provider) for the single sign-on tests:
its own Django project and SQLite file, run in a second process by
tests/browser/test_sso.py. Test only: never part of the product."""
