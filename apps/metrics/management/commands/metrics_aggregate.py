"""Aggregate a cluster's new metric samples into windows once: the job spark-submit runs.

The Spark transforms are spark_jobs.partition_loads (pure PySpark); this entry
point needs Django because the results go to the database. By hand:

    python manage.py metrics_aggregate --cluster demo
    spark-submit --jars $(ls .cache/spark-jars/*.jar | paste -sd,) \\
        manage.py metrics_aggregate --cluster demo

Exit status: 0 succeeded, 1 the run failed (recorded on it), 2 unknown cluster or
run, 3 another aggregation of the cluster is running.
"""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.clusters.models import Cluster
from apps.metrics.models import AggregationRun
from apps.metrics.services import AggregationAlreadyRunning, aggregation_run


class Command(BaseCommand):
    help = "Aggregate the new records of a cluster's metrics topic into windows, once."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--cluster", required=True, help="cluster name (slug)")
        parser.add_argument("--run-id", type=int, help="a run started by aggregation_submit")

    def handle(self, *args, cluster: str, run_id: int | None, **options) -> None:
        found = Cluster.objects.filter(name=cluster).first()
        if found is None:
            raise CommandError(f"unknown cluster {cluster!r}", returncode=2)
        run = None
        if run_id is not None:
            run = AggregationRun.objects.filter(
                pk=run_id, cluster=found, status=AggregationRun.Status.RUNNING
            ).first()
            if run is None:
                raise CommandError(f"no running run {run_id} of {cluster!r}", returncode=2)
        try:
            run = aggregation_run(cluster=found, run=run)
        except AggregationAlreadyRunning as exc:
            raise CommandError(str(exc), returncode=3) from None
        self.stdout.write(
            f"run {run.pk} {run.status}: {run.input_rows} rows in, {run.output_rows} partition "
            f"loads, {run.malformed_rows} malformed, {run.late_rows} late"
            + (f"; error: {run.error.splitlines()[0]}" if run.error else "")
        )
        if run.status != AggregationRun.Status.SUCCEEDED:
            raise CommandError(f"run {run.pk} failed", returncode=1)
