"""Helpers shared by every test package (polling, users, partition loads, guards).

Imported as `tests.support.<module>`: tests/ is a package and the repository root is on
sys.path (pyproject's pytest `pythonpath`), so each module loads under one name only.
"""
