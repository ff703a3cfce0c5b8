"""The sample task starts an aggregation as soon as its round is flushed."""

from unittest import mock

import pytest

from apps.clusters.models import Cluster
from apps.metrics import tasks as metrics_tasks
from apps.metrics.services.sampling import SampleResult

pytestmark = pytest.mark.django_db

SAMPLED = SampleResult(
    ts_ms=0,
    partitions=1,
    records=1,
    consumer_groups=0,
    sizes_known=True,
    seconds=0.1,
    sizes_error="",
)


def _sample_task(cluster: Cluster, outcome: SampleResult | None) -> mock.MagicMock:
    with (
        mock.patch.object(metrics_tasks, "metrics_sample_round", return_value=outcome),
        mock.patch.object(metrics_tasks.metrics_aggregate_task, "apply_async") as aggregate,
    ):
        metrics_tasks.metrics_sample_task(cluster.pk)
    return aggregate


def test_it_aggregates_as_soon_as_a_sample_round_is_flushed(empty_cluster, settings):
    settings.METRICS_AGGREGATE_AFTER_SAMPLE = True
    settings.METRICS_SAMPLE_INTERVAL = 5.0
    aggregate = _sample_task(empty_cluster, SAMPLED)
    assert [c.args for c in aggregate.call_args_list] == [((empty_cluster.pk,),)]
    assert aggregate.call_args.kwargs == {"expires": 5.0}


def test_it_does_not_aggregate_after_a_round_that_sampled_nothing(empty_cluster, settings):
    # Failed, in backoff, or another round still running: no new records to read.
    settings.METRICS_AGGREGATE_AFTER_SAMPLE = True
    assert not _sample_task(empty_cluster, None).called


def test_it_leaves_aggregation_to_its_tick_when_the_setting_is_off(empty_cluster, settings):
    settings.METRICS_AGGREGATE_AFTER_SAMPLE = False
    assert not _sample_task(empty_cluster, SAMPLED).called
