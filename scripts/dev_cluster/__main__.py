"""`python -m dev_cluster ...` (with scripts/ on sys.path): the CLI; see scripts/dev-cluster."""

import sys

from .cli import main

sys.exit(main())
