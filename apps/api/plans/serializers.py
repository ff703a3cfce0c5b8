"""What the API shows of a plan, with the bodies it accepts (queries, decisions)."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.core.bounds import BROKER_ID_MAX, MAX_MOVES_MAX, THROTTLE_BYTES_PER_SEC_MAX
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
            "log_dirs_before",
            "log_dirs_after",
            "added",
            "removed",
            "leader_only",
            "bytes",
            "bytes_dirs",
            "goals",
            "state",
            "bytes_done",
            "started_at",
            "finished_at",
            "error",
        ]


class PlanMoveQuerySerializer(serializers.Serializer):
    topic = serializers.CharField(required=False, max_length=249, help_text="contains")
    broker = serializers.IntegerField(required=False, min_value=0, max_value=BROKER_ID_MAX)
    goal = serializers.CharField(required=False, max_length=100)
    ordering = serializers.ChoiceField(
        required=False, choices=list(PLAN_MOVE_ORDERINGS), default="topic"
    )


class PlanRequestSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=[m.value for m in REQUESTABLE_MODES])
    brokers = serializers.ListField(
        child=serializers.IntegerField(min_value=0, max_value=BROKER_ID_MAX),
        required=False,
        default=list,
        max_length=1000,
    )
    disks = serializers.ListField(
        child=serializers.CharField(max_length=4096),
        required=False,
        default=list,
        max_length=1000,
        help_text='remove-disks: the log dirs to empty, as "BROKER:DIR" (e.g. "3:/data/b").',
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
        max_value=THROTTLE_BYTES_PER_SEC_MAX,
        help_text="Replication throttle for this run (0: none); omitted: the cluster policy's.",
    )


class TuneSerializer(serializers.Serializer):
    """Change a running plan; omitted values stay as they are."""

    throttle_bytes_per_sec = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        min_value=0,
        max_value=THROTTLE_BYTES_PER_SEC_MAX,
    )
    max_moves_per_broker = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=MAX_MOVES_MAX
    )
    max_moves_cluster = serializers.IntegerField(
        required=False, allow_null=True, default=None, min_value=1, max_value=MAX_MOVES_MAX
    )
    reason = serializers.CharField(required=False, allow_blank=True, max_length=2000, default="")


class RejectSerializer(serializers.Serializer):
    reason = serializers.CharField(max_length=2000, help_text="Required: why the plan is rejected.")


class EmptySerializer(serializers.Serializer):
    pass


class ExportQuerySerializer(serializers.Serializer):
    which = serializers.ChoiceField(choices=["reassignment", "rollback"], default="reassignment")


class ThrottlePointSerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    rate = serializers.IntegerField(help_text="Bytes/s in effect from `at` on; 0: none.")
    action = serializers.CharField(help_text="The audit action that changed it.")
    reason = serializers.CharField(help_text="Why (the adaptive throttle says which broker).")
