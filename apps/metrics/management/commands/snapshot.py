"""Write a cluster's current snapshot (BALANCING.md §1) for the planner."""

import json
import os
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from apps.clusters.models import Cluster
from apps.metrics.selectors import cluster_snapshot_build


class Command(BaseCommand):
    help = "Write the cluster's placement and latest complete window's loads as snapshot JSON."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--cluster", required=True, help="cluster name")
        parser.add_argument("--output", required=True, help="file to write ('-' for stdout)")

    def handle(self, *args, cluster: str, output: str, **options) -> None:
        found = Cluster.objects.filter(name=cluster).first()
        if found is None:
            raise CommandError(f"unknown cluster {cluster!r}")
        snapshot = cluster_snapshot_build(cluster=found)
        text = json.dumps(snapshot.as_json(), indent=1) + "\n"
        if output == "-":
            self.stdout.write(text, ending="")
            return
        target = Path(output)
        if not target.parent.is_dir():
            raise CommandError(f"directory {str(target.parent)!r} does not exist")
        # Write beside the target and rename: a reader never sees half a snapshot.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w") as f:
                f.write(text)
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        window = snapshot.window.start if snapshot.window else "no measured window"
        self.stderr.write(
            f"wrote {target}: {len(snapshot.brokers)} brokers, "
            f"{len(snapshot.partitions)} partitions, loads of {window}"
        )
