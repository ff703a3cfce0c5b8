"""Helpers shared by every test package: users in role groups and polling.

Importable as `support` because tests/ (no __init__.py) is on sys.path under pytest.
"""
