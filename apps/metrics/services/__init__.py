"""Traffic metrics writes: sample the clusters, aggregate the samples on Spark, keep
the windows. One concept per module:

- `sampling`: one sample round of a cluster, published to the metrics topic;
- `sample_round`: a scheduled sample round: one in flight, backoff, quiet logs;
- `runs`: the aggregation run row, which is also the per-cluster lock;
- `aggregation`: one aggregation in this process (read range, Spark job, store);
- `storage`: one run's results written in one transaction;
- `bulk_insert`: a window's bounds prepared for its rows, and which windows are stored
  (the rows go through core.bulk_write.rows_insert);
- `topic_loads`: each stored window as one row per topic, its partitions' loads packed
  and its traffic summed per broker (the heatmap's rows);
- `retention`: which windows and runs are kept;
- `spark_session`: the SparkSession from the settings, kept warm per worker;
- `spark_submit`: one aggregation through spark-submit;
- `dispatch`: in-process or spark-submit, as the settings say.

See docs/metrics.md for the record schema, the windows and how the rates are derived.
"""

from .aggregation import ReadRange, aggregation_run, kafka_source_options, metrics_read_range
from .dispatch import aggregation_dispatch
from .retention import metrics_windows_prune
from .runs import AggregationAlreadyRunning, aggregation_run_start
from .sample_round import metrics_sample_round
from .sampling import SampleResult, metric_records_build, metrics_sample, replica_sizes_read
from .spark_session import spark_session_create, spark_session_for_worker
from .spark_submit import aggregation_submit, spark_submit_command
from .storage import aggregation_results_store

__all__ = [
    "AggregationAlreadyRunning",
    "ReadRange",
    "SampleResult",
    "aggregation_dispatch",
    "aggregation_results_store",
    "aggregation_run",
    "aggregation_run_start",
    "aggregation_submit",
    "kafka_source_options",
    "metric_records_build",
    "metrics_read_range",
    "metrics_sample",
    "metrics_sample_round",
    "metrics_windows_prune",
    "replica_sizes_read",
    "spark_session_create",
    "spark_session_for_worker",
    "spark_submit_command",
]
