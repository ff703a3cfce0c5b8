"""What the tests (tests/) and the benchmarks (bench/) both use: polling, users in role
groups, topics and acks=all traffic on the dev cluster, partition loads, synthetic
clusters and the closed-loop scenario.

Not under tests/, so bench/ never imports the test suite. Importable as `devkit` with
scripts/ on sys.path, like `dev_cluster` (pyproject's pytest `pythonpath` for the tests;
each bench script inserts scripts/ itself).
"""
