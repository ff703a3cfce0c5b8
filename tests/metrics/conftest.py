"""Metrics tests: the one SparkSession is the `spark` fixture of tests/conftest.py."""

from __future__ import annotations

import logging

# py4j logs "Closing down clientserver connection" from __del__ at interpreter exit,
# after pytest has closed the captured streams; that INFO line is noise.
logging.getLogger("py4j").setLevel(logging.WARNING)
