"""What the API shows, and the validation of what it accepts (query strings and bodies)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.audit.models import AuditEvent
from apps.audit.selectors import EXPORT_FIELDS
from apps.clusters.models import Broker, Cluster, Partition
from apps.metrics.selectors import HEATMAP_LIMIT_MAX, HEATMAP_METRICS, HEATMAP_SORTS
from apps.plans.models import Plan, PlanMove
from apps.plans.selectors import (
    PLAN_MOVE_ORDERINGS,
    plan_actions_get,
    plan_estimate_check,
    plan_eta_at_throttle,
    plan_progress,
    plan_shortfalls_get,
)
from apps.plans.services import REQUESTABLE_MODES


class ClusterSerializer(serializers.ModelSerializer):
    """A cluster and its health at a glance (client_config is never shown)."""

    reachable = serializers.BooleanField(read_only=True)

    class Meta:
        model = Cluster
        fields = [
            "id",
            "name",
            "bootstrap_servers",
            "kafka_cluster_id",
            "controller_id",
            "created_at",
            "last_synced_at",
            "last_sync_error",
            "last_sync_error_at",
            "reachable",
        ]


class PlanBriefSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.CharField()
    mode = serializers.CharField()
    trigger = serializers.CharField()
    bytes_to_move = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class ClusterHealthSerializer(serializers.Serializer):
    cluster = ClusterSerializer()
    healthy = serializers.BooleanField()
    brokers_alive = serializers.IntegerField()
    brokers_total = serializers.IntegerField()
    topics = serializers.IntegerField()
    partitions = serializers.IntegerField()
    offline = serializers.IntegerField()
    under_replicated = serializers.IntegerField()
    balance = serializers.DictField(
        child=serializers.FloatField(allow_null=True),
        help_text="Per resource: busiest alive broker over the mean (1.0 is perfect).",
    )
    open_plan = PlanBriefSerializer(allow_null=True)
    running_plan = PlanBriefSerializer(allow_null=True)


class BrokerSerializer(serializers.ModelSerializer):
    class Meta:
        model = Broker
        fields = [
            "node_id",
            "host",
            "port",
            "rack",
            "alive",
            "first_seen",
            "last_seen",
            "capacity_network_in",
            "capacity_network_out",
            "capacity_disk",
        ]


class BrokerRowSerializer(serializers.Serializer):
    broker = BrokerSerializer()
    replicas = serializers.IntegerField()
    leaders = serializers.IntegerField()
    replica_skew_pct = serializers.FloatField(allow_null=True)
    leader_skew_pct = serializers.FloatField(allow_null=True)


class DrainedBrokerSerializer(serializers.Serializer):
    node_id = serializers.IntegerField()
    drained_at = serializers.DateTimeField()
    drained_by = serializers.CharField(help_text="Who requested (else approved) the drain.")
    plan_id = serializers.IntegerField(allow_null=True, help_text="The remove-brokers plan.")
    replicas = serializers.IntegerField(help_text="Replicas it holds now: 0 while kept empty.")


class TopicRowSerializer(serializers.Serializer):
    name = serializers.CharField(source="topic.name")
    internal = serializers.BooleanField(source="topic.internal")
    partitions = serializers.IntegerField()
    replication_factor = serializers.IntegerField()
    offline = serializers.IntegerField()
    under_replicated = serializers.IntegerField()


class PartitionSerializer(serializers.ModelSerializer):
    topic = serializers.CharField(source="topic.name")

    class Meta:
        model = Partition
        fields = ["topic", "index", "leader", "replicas", "isr", "offline", "under_replicated"]


class PartitionQuerySerializer(serializers.Serializer):
    topic = serializers.CharField(required=False, max_length=249)
    broker = serializers.IntegerField(required=False, min_value=0)


class StampedQuerySerializer(serializers.Serializer):
    stamp = serializers.CharField(
        default="",
        allow_blank=True,
        max_length=200,
        help_text="The cluster state the page shows, `<model>|<window>` as pushed on its "
        "websocket: answers for one stamp are built once and shared by every viewer.",
    )


class HeatmapQuerySerializer(StampedQuerySerializer):
    metric = serializers.ChoiceField(choices=list(HEATMAP_METRICS), default="replicas")
    internal = serializers.BooleanField(default=True, help_text="Include internal topics.")
    search = serializers.CharField(default="", allow_blank=True, max_length=249)
    sort = serializers.ChoiceField(choices=list(HEATMAP_SORTS), default="load")
    limit = serializers.IntegerField(default=50, min_value=1, max_value=HEATMAP_LIMIT_MAX)
    offset = serializers.IntegerField(default=0, min_value=0)


class HeatmapSerializer(serializers.Serializer):
    metric = serializers.CharField()
    label = serializers.CharField()
    unit = serializers.CharField()
    brokers = serializers.ListField(child=serializers.IntegerField())
    broker_alive = serializers.ListField(child=serializers.BooleanField())
    topics = serializers.ListField(child=serializers.CharField())
    z = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField()),
        help_text="z[topic][broker], in the order of `topics` and `brokers`.",
    )
    window_end = serializers.CharField(help_text="End of the traffic window; empty for counts.")
    topics_total = serializers.IntegerField(help_text="Topics matching the search.")
    offset = serializers.IntegerField()
    other = serializers.ListField(
        child=serializers.FloatField(),
        help_text="The matching topics not on this page, summed per broker; empty when none.",
    )
    other_topics = serializers.IntegerField()


class TrafficQuerySerializer(StampedQuerySerializer):
    windows = serializers.IntegerField(default=60, min_value=1, max_value=360)


class BrokerTrafficSerializer(serializers.Serializer):
    windows = serializers.ListField(child=serializers.CharField(), help_text="Window ends.")
    series = serializers.DictField(
        child=serializers.DictField(
            child=serializers.ListField(child=serializers.FloatField(allow_null=True))
        ),
        help_text="broker id -> network_in / network_out / messages_in -> values per window.",
    )


class BrokerLoadSerializer(serializers.Serializer):
    broker_id = serializers.IntegerField()
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    network_in = serializers.FloatField()
    network_out = serializers.FloatField()
    disk = serializers.IntegerField()
    replicas = serializers.IntegerField()
    leaders = serializers.IntegerField()


class PartitionLoadSerializer(serializers.Serializer):
    topic = serializers.CharField()
    partition = serializers.IntegerField()
    window_start = serializers.DateTimeField()
    window_end = serializers.DateTimeField()
    samples = serializers.IntegerField()
    leader = serializers.IntegerField(allow_null=True)
    replicas = serializers.ListField(child=serializers.IntegerField())
    messages_in = serializers.FloatField(allow_null=True)
    bytes_in = serializers.FloatField(allow_null=True)
    bytes_out = serializers.FloatField(allow_null=True)
    size = serializers.IntegerField(allow_null=True)


class BrokerLoadQuerySerializer(serializers.Serializer):
    since = serializers.DateTimeField(required=False, help_text="Windows starting at or after.")
    until = serializers.DateTimeField(required=False, help_text="Windows starting before.")

    def validate(self, attrs: dict) -> dict:
        if "since" in attrs and "until" in attrs and attrs["since"] >= attrs["until"]:
            raise serializers.ValidationError("since must be before until")
        return attrs


class LoadQuerySerializer(BrokerLoadQuerySerializer):
    topic = serializers.CharField(required=False, max_length=249)


# --- plans ------------------------------------------------------------------------


class PlanSerializer(serializers.ModelSerializer):
    cluster = serializers.CharField(source="cluster.name")
    requested_by = serializers.CharField(source="requested_by.username", default=None)
    decided_by = serializers.CharField(source="decided_by.username", default=None)
    partitions = serializers.IntegerField(source="partition_count")

    class Meta:
        model = Plan
        fields = [
            "id",
            "cluster",
            "state",
            "origin",
            "mode",
            "brokers",
            "trigger",
            "partitions",
            "bytes_to_move",
            "data_loss_partitions",
            "requested_by",
            "request_reason",
            "decided_by",
            "decided_by_policy",
            "decided_at",
            "decision_reason",
            "rollback_of",
            "superseded_by",
            "created_at",
            "started_at",
            "finished_at",
            "error",
        ]


class PlanProgressSerializer(serializers.Serializer):
    moves_total = serializers.IntegerField()
    moves_by_state = serializers.DictField(child=serializers.IntegerField())
    bytes_total = serializers.IntegerField()
    bytes_done = serializers.IntegerField()
    percent = serializers.FloatField()
    eta_seconds = serializers.FloatField(allow_null=True)
    rate_bytes_per_sec = serializers.FloatField(allow_null=True)
    cancel_requested = serializers.BooleanField()
    paused = serializers.BooleanField()
    throttle_bytes_per_sec = serializers.IntegerField(help_text="In effect for this run; 0: none.")
    max_moves_per_broker = serializers.IntegerField()
    max_moves_cluster = serializers.IntegerField()


class PlanActionsSerializer(serializers.Serializer):
    approve = serializers.BooleanField()
    reject = serializers.BooleanField()
    execute = serializers.BooleanField()
    cancel = serializers.BooleanField()
    rollback = serializers.BooleanField()
    pause = serializers.BooleanField()
    resume = serializers.BooleanField()
    tune = serializers.BooleanField()


class PlanEstimateSerializer(serializers.Serializer):
    bytes_estimate = serializers.IntegerField(help_text="bytes_to_move, as last estimated.")
    estimated_at = serializers.DateTimeField(
        allow_null=True, help_text="When it was read from the replicas' logs."
    )
    duration_estimate = serializers.FloatField(
        allow_null=True,
        help_text="Expected copy time in seconds (null: no rate known yet, or see note).",
    )
    note = serializers.CharField(
        help_text="Why there is no copy time, e.g. the writes outpace the throttle; else empty."
    )
    bytes_copied = serializers.IntegerField(
        allow_null=True,
        help_text="Bytes copied, as the progress bar counts them (completed plans).",
    )
    duration_actual = serializers.FloatField(allow_null=True, help_text="Seconds, start to end.")
    bytes_error_percent = serializers.FloatField(allow_null=True)
    duration_error_percent = serializers.FloatField(allow_null=True)


class UnmetHardGoalSerializer(serializers.Serializer):
    name = serializers.CharField()
    violation_before = serializers.FloatField(help_text="In the goal's unit (BALANCING.md §8).")
    violation_after = serializers.FloatField()
    offenders = serializers.IntegerField()
    worst = serializers.CharField(allow_null=True)


class UnplacedPartitionSerializer(serializers.Serializer):
    partition = serializers.CharField()
    reason = serializers.CharField()


class PlanDetailSerializer(PlanSerializer):
    report = serializers.JSONField()
    progress = serializers.SerializerMethodField()
    actions = serializers.SerializerMethodField()
    eta_seconds_at_throttle = serializers.SerializerMethodField(
        help_text="Bytes to move over the cluster's replication throttle (null: no throttle)."
    )
    estimate = serializers.SerializerMethodField(
        help_text="The estimate, and once completed what was really copied and how long it took."
    )
    unmet_hard_goals = serializers.SerializerMethodField(
        help_text="Hard goals the plan leaves violated, before -> after, worst offender."
    )
    unplaced_partitions = serializers.SerializerMethodField(
        help_text="Partitions the plan leaves where they are, with the reason."
    )

    class Meta(PlanSerializer.Meta):
        fields = PlanSerializer.Meta.fields + [
            "report",
            "progress",
            "actions",
            "eta_seconds_at_throttle",
            "estimate",
            "unmet_hard_goals",
            "unplaced_partitions",
        ]

    @extend_schema_field(UnmetHardGoalSerializer(many=True))
    def get_unmet_hard_goals(self, plan: Plan) -> list[dict]:
        goals = plan_shortfalls_get(plan=plan).unmet_hard_goals
        return UnmetHardGoalSerializer(goals, many=True).data

    @extend_schema_field(UnplacedPartitionSerializer(many=True))
    def get_unplaced_partitions(self, plan: Plan) -> list[dict]:
        unplaced = plan_shortfalls_get(plan=plan).unplaced_partitions
        return UnplacedPartitionSerializer(unplaced, many=True).data

    @extend_schema_field(PlanProgressSerializer)
    def get_progress(self, plan: Plan) -> dict:
        return PlanProgressSerializer(plan_progress(plan=plan)).data

    @extend_schema_field(PlanActionsSerializer)
    def get_actions(self, plan: Plan) -> dict:
        return PlanActionsSerializer(
            plan_actions_get(user=self.context["request"].user, plan=plan)
        ).data

    def get_eta_seconds_at_throttle(self, plan: Plan) -> float | None:
        return plan_eta_at_throttle(plan=plan)

    @extend_schema_field(PlanEstimateSerializer)
    def get_estimate(self, plan: Plan) -> dict:
        return PlanEstimateSerializer(plan_estimate_check(plan=plan)).data


class PlanMoveSerializer(serializers.ModelSerializer):
    class Meta:
        model = PlanMove
        fields = [
            "topic",
            "partition",
            "replicas_before",
            "replicas_after",
            "added",
            "removed",
            "leader_only",
            "bytes",
            "goals",
            "state",
            "bytes_done",
            "started_at",
            "finished_at",
            "error",
        ]


class PlanMoveQuerySerializer(serializers.Serializer):
    topic = serializers.CharField(required=False, max_length=249, help_text="contains")
    broker = serializers.IntegerField(required=False, min_value=0)
    goal = serializers.CharField(required=False, max_length=100)
    ordering = serializers.ChoiceField(
        required=False, choices=list(PLAN_MOVE_ORDERINGS), default="topic"
    )


class PlanRequestSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=[m.value for m in REQUESTABLE_MODES])
    brokers = serializers.ListField(
        child=serializers.IntegerField(min_value=0), required=False, default=list, max_length=1000
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")
    allow_data_loss = serializers.BooleanField(required=False, default=False)


class ApproveSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")
    confirm_data_loss = serializers.BooleanField(required=False, default=False)
    throttle_bytes_per_sec = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=0,
        help_text="Replication throttle for this run (0: none); omitted: the cluster policy's.",
    )


class TuneSerializer(serializers.Serializer):
    """Change a running plan; omitted values stay as they are."""

    throttle_bytes_per_sec = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=0
    )
    max_moves_per_broker = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1
    )
    max_moves_cluster = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


class RejectSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000, help_text="Required: why the plan is rejected.")


class ReasonSerializer(serializers.Serializer):
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


class EmptySerializer(serializers.Serializer):
    pass


class NewerPlanSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    url = serializers.CharField()


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    newer_plan = NewerPlanSerializer(
        required=False,
        help_text="A 409 on a superseded or stale plan: the proposal to review instead.",
    )


class ExportQuerySerializer(serializers.Serializer):
    which = serializers.ChoiceField(choices=["reassignment", "rollback"], default="reassignment")


# --- what-if ------------------------------------------------------------------------


class WhatIfBrokerSerializer(serializers.Serializer):
    id = serializers.IntegerField(min_value=0)
    rack = serializers.CharField(required=False, allow_null=True, max_length=255, default=None)


class WhatIfRequestSerializer(serializers.Serializer):
    add_brokers = WhatIfBrokerSerializer(many=True, required=False, default=list)
    remove_brokers = serializers.ListField(
        child=serializers.IntegerField(min_value=0), required=False, default=list
    )
    traffic_scale = serializers.FloatField(
        required=False, default=1.0, min_value=0.01, max_value=100
    )


class LoadsBeforeAfterSerializer(serializers.Serializer):
    brokers = serializers.ListField(child=serializers.IntegerField())
    before = serializers.DictField(child=serializers.ListField(child=serializers.FloatField()))
    after = serializers.DictField(child=serializers.ListField(child=serializers.FloatField()))


class WhatIfSerializer(serializers.Serializer):
    mode = serializers.CharField()
    brokers = serializers.ListField(child=serializers.IntegerField())
    traffic_scale = serializers.FloatField()
    plan = serializers.JSONField(help_text="Kafka's reassignment JSON; nothing is proposed.")
    report = serializers.JSONField()
    loads = LoadsBeforeAfterSerializer()


# --- audit --------------------------------------------------------------------------


class AuditQuerySerializer(serializers.Serializer):
    cluster = serializers.SlugField(required=False, max_length=100)
    actor = serializers.CharField(required=False, max_length=255)
    action = serializers.CharField(required=False, max_length=100, help_text="prefix")
    object_type = serializers.CharField(required=False, max_length=100)
    object_id = serializers.CharField(required=False, max_length=100)
    since = serializers.DateTimeField(required=False)
    until = serializers.DateTimeField(required=False)


class AuditEventSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditEvent
        # The same public shape as the CSV / JSON export.
        fields = list(EXPORT_FIELDS)
