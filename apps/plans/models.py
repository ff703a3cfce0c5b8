"""Plans (Kafka reassignments awaiting a decision or running), their moves, the
execution bookkeeping that makes a run resumable, and the per-cluster policy."""

from django.conf import settings
from django.db import models

from apps.clusters.models import Cluster


def _default_detection_interval() -> int:
    return int(settings.PLAN_DETECTION_INTERVAL)


def _default_grace() -> int:
    return int(settings.PLAN_DEAD_BROKER_GRACE)


def _default_throttle() -> int:
    return int(settings.EXECUTOR_DEFAULT_THROTTLE)


def _default_moves_per_broker() -> int:
    return int(settings.EXECUTOR_MAX_MOVES_PER_BROKER)


def _default_moves_cluster() -> int:
    return int(settings.EXECUTOR_MAX_MOVES_CLUSTER)


class ClusterPolicy(models.Model):
    """What the periodic balancer may do on one cluster. Edited in the admin."""

    cluster = models.OneToOneField(Cluster, on_delete=models.CASCADE, related_name="policy")
    detection_enabled = models.BooleanField(default=True)
    detection_interval = models.PositiveIntegerField(
        default=_default_detection_interval, help_text="Seconds between two detections."
    )
    dead_broker_grace = models.PositiveIntegerField(
        default=_default_grace,
        help_text="Seconds a broker must stay dead before self-healing is proposed.",
    )
    goals = models.JSONField(
        default=list,
        blank=True,
        help_text='Soft goals in priority order, e.g. ["replica-distribution", '
        '"network-in-distribution"]. Empty: every soft goal. Hard goals always apply.',
    )
    balance_threshold = models.FloatField(
        default=1.10, help_text="Max utilisation over the mean a goal tolerates (>= 1.0)."
    )
    balance_target = models.FloatField(
        default=1.05,
        help_text="What a detected rebalance aims at (>= 1.0; the threshold if higher), so "
        "the next small drift does not trigger again.",
    )
    goal_thresholds = models.JSONField(
        default=dict, blank=True, help_text='Per-goal override, e.g. {"leader-distribution": 1.2}.'
    )
    topics_include = models.JSONField(
        default=list,
        blank=True,
        help_text='Topic name patterns (fnmatch, e.g. "orders-*") the balancer manages. '
        "Empty: every topic.",
    )
    topics_exclude = models.JSONField(
        default=list, blank=True, help_text="Topic name patterns the balancer never touches."
    )
    excluded_brokers = models.JSONField(
        default=list,
        blank=True,
        help_text="Broker ids the balancer leaves alone: nothing moves to or from them.",
    )
    auto_approve_self_healing = models.BooleanField(
        default=False,
        help_text="Approve self-healing of dead brokers, and the demotion of brokers the "
        "canary finds slow, without an operator (never when data would be lost).",
    )
    auto_approve_max_bytes = models.BigIntegerField(
        null=True,
        blank=True,
        help_text="Approve plans that move fewer bytes than this. Empty: off.",
    )
    four_eyes = models.BooleanField(
        default=True,
        help_text="Whoever requested a plan by hand may not approve it. Off: a single "
        "operator approves their own plans, and each plan says it was self-approved.",
    )
    throttle_bytes_per_sec = models.BigIntegerField(
        default=_default_throttle, help_text="Replication throttle during execution; 0: none."
    )
    throttle_auto = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Adaptive throttle: start low, raise it while every broker's canary p99 "
        "stays in its band, halve it when one leaves; never above the throttle above (or "
        "the approver's), which is its ceiling.",
    )
    max_moves_per_broker = models.PositiveIntegerField(default=_default_moves_per_broker)
    max_moves_cluster = models.PositiveIntegerField(default=_default_moves_cluster)
    # Bookkeeping of the detector, not an operator setting (not audited).
    last_detection_at = models.DateTimeField(null=True, blank=True, editable=False)
    # Start of the window in which a traffic goal was first seen violated, until the
    # next slide confirms it (or it goes away).
    violation_window_start = models.DateTimeField(null=True, blank=True, editable=False)
    # What the last detection round did with the open proposal, and why.
    last_detection_outcome = models.TextField(blank=True, editable=False)
    # Since when a rebalance has waited for loads of partitions no window measured yet.
    loads_wait_since = models.DateTimeField(null=True, blank=True, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "cluster policies"

    def __str__(self) -> str:
        return f"policy of {self.cluster.name}"


class PlanState(models.TextChoices):
    PROPOSED = "proposed"
    APPROVED = "approved"
    EXECUTING = "executing"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    REJECTED = "rejected"
    SUPERSEDED = "superseded"
    STALE = "stale"


# The only legal state changes; services check every transition against this.
PLAN_TRANSITIONS: dict[str, set[str]] = {
    PlanState.PROPOSED: {
        PlanState.APPROVED,
        PlanState.REJECTED,
        PlanState.SUPERSEDED,
        PlanState.STALE,
    },
    PlanState.APPROVED: {PlanState.EXECUTING, PlanState.STALE, PlanState.CANCELLED},
    PlanState.EXECUTING: {PlanState.COMPLETED, PlanState.FAILED, PlanState.CANCELLED},
}
OPEN_STATES = (PlanState.PROPOSED,)
ACTIVE_STATES = (PlanState.APPROVED, PlanState.EXECUTING)


class PlanOrigin(models.TextChoices):
    DETECTOR = "detector", "periodic balancer"
    OPERATOR = "operator", "requested by hand"
    ROLLBACK = "rollback", "rollback"


class PlanMode(models.TextChoices):
    FULL = "full", "full rebalance"
    ADD_BROKERS = "add-brokers", "add brokers"
    REMOVE_BROKERS = "remove-brokers", "remove brokers (drain)"
    FIX_OFFLINE = "fix-offline", "self-healing (dead brokers)"
    LEADERS = "leaders", "leaders only"
    DEMOTE = "demote", "demote brokers (leadership off)"
    REMOVE_DISKS = "remove-disks", "remove disks (empty log dirs)"
    ROLLBACK = "rollback", "rollback"


class Plan(models.Model):
    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="plans")
    origin = models.CharField(max_length=16, choices=PlanOrigin.choices)
    mode = models.CharField(max_length=16, choices=PlanMode.choices)
    brokers = models.JSONField(default=list, blank=True)
    # remove-disks: the log dirs it empties, [[broker id, path], ...]
    disks = models.JSONField(default=list, null=True, blank=True)
    trigger = models.TextField(blank=True, help_text="Why this plan was proposed.")
    state = models.CharField(
        max_length=16, choices=PlanState.choices, default=PlanState.PROPOSED, db_index=True
    )
    # sha256 of the replica lists, at proposal time, of the partitions the plan changes.
    fingerprint = models.CharField(max_length=64)
    # Partitions the reassignment changes, stored so lists need not read it.
    partition_count = models.PositiveIntegerField(default=0)
    bytes_to_move = models.BigIntegerField(default=0)
    # When bytes_to_move was read from the replicas' logs (proposal, then approval),
    # and the copy time expected then (None: no rate known yet).
    bytes_estimated_at = models.DateTimeField(null=True, blank=True)
    duration_estimate_seconds = models.FloatField(null=True, blank=True)
    # Why there is no copy time (e.g. the writes outpace the throttle), else empty.
    estimate_note = models.CharField(max_length=500, blank=True, default="")
    # Partitions healed only by giving up their data (every replica on dead brokers).
    data_loss_partitions = models.JSONField(default=list, blank=True)

    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    request_reason = models.TextField(blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_by_policy = models.BooleanField(default=False)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)
    data_loss_confirmed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    rollback_of = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="rollbacks"
    )
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        permissions = [
            ("request_plan", "Can request a plan by hand (or a rollback)"),
            ("approve_plan", "Can approve a plan"),
            ("reject_plan", "Can reject a plan"),
            ("cancel_plan", "Can cancel an approved or executing plan"),
            ("approve_data_loss", "Can approve a plan that heals partitions with data loss"),
        ]

    def __str__(self) -> str:
        return f"plan #{self.pk} ({self.get_mode_display()}) on {self.cluster.name}"

    def save(self, *args, update_fields=None, **kwargs) -> None:
        if update_fields is not None:  # the content's parts are saved below, if set
            update_fields = [f for f in update_fields if f not in PLAN_CONTENT_FIELDS]
        super().save(*args, update_fields=update_fields, **kwargs)
        if self.__dict__.pop("_content_changed", False):
            content = self._content_get()
            content.plan = self
            # A new row is inserted at once: an UPDATE tried first would serialise
            # the multi-megabyte JSON once more, for nothing.
            content.save(force_insert=content._state.adding)

    def refresh_from_db(self, *args, **kwargs) -> None:
        super().refresh_from_db(*args, **kwargs)
        whole = not args and kwargs.get("fields") is None
        if whole and not self.__dict__.get("_content_changed"):
            self.__dict__.pop("_content", None)

    @property
    def needs_data_loss_confirmation(self) -> bool:
        return bool(self.data_loss_partitions)

    # The large parts (reassignment, rollback, report: megabytes at 100k+ moves) live in
    # PlanContent, read on first use. Setting one (also as a keyword of Plan(...) or
    # Plan.objects.create) is written by the next save(); the reassignment also sets
    # partition_count.
    def _content_get(self) -> "PlanContent":
        content = self.__dict__.get("_content")
        if content is None:
            if self.pk is not None:
                content = PlanContent.objects.filter(plan_id=self.pk).first()
            if content is None:
                content = PlanContent(
                    reassignment={"version": 1, "partitions": []},
                    rollback_reassignment={"version": 1, "partitions": []},
                )
            self.__dict__["_content"] = content
        return content

    def _content_set(self, name: str, value: dict) -> None:
        setattr(self._content_get(), name, value)
        self.__dict__["_content_changed"] = True

    @property
    def reassignment(self) -> dict:
        """Kafka's reassignment JSON."""
        return self._content_get().reassignment

    @reassignment.setter
    def reassignment(self, value: dict) -> None:
        self._content_set("reassignment", value)
        self.partition_count = len(value.get("partitions", []))

    @property
    def rollback_reassignment(self) -> dict:
        """The reassignment that restores the starting assignment."""
        return self._content_get().rollback_reassignment

    @rollback_reassignment.setter
    def rollback_reassignment(self, value: dict) -> None:
        self._content_set("rollback_reassignment", value)

    @property
    def report(self) -> dict:
        return self._content_get().report

    @report.setter
    def report(self, value: dict) -> None:
        self._content_set("report", value)


PLAN_CONTENT_FIELDS = ("reassignment", "rollback_reassignment", "report")


class PlanContent(models.Model):
    """A plan's large parts, in a table of their own: lists, badges and the
    compare-and-set of a state change read and write the plan's short row only (SQLite
    keeps a row's columns together, so a deferred multi-megabyte column still had to be
    walked past, and rewritten on every update of the row)."""

    plan = models.OneToOneField(
        Plan, on_delete=models.CASCADE, primary_key=True, related_name="content"
    )
    # Kafka's reassignment JSON, and the one that restores the starting assignment.
    reassignment = models.JSONField()
    rollback_reassignment = models.JSONField()
    report = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"content of plan #{self.plan_id}"


class MoveState(models.TextChoices):
    PENDING = "pending"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    CANCELLED = "cancelled"
    FAILED = "failed"


def _disk_targets(
    topic: str, partition: int, replicas: list[int], log_dirs: list[str] | None
) -> dict[tuple[str, int, int], str]:
    if not log_dirs:
        return {}
    return {
        (topic, partition, broker): path
        for broker, path in zip(replicas, log_dirs, strict=False)
        if path and path != "any"
    }


def dir_copies_of(
    *,
    topic: str,
    partition: int,
    replicas_before: list[int],
    log_dirs_before: list[str] | None,
    replicas_after: list[int],
    log_dirs_after: list[str] | None,
) -> dict[tuple[str, int, int], str]:
    """{(topic, partition, broker): dir} of the replicas a move copies between two dirs
    of a broker they stay on (a dir before not known counts as another dir)."""
    before = _disk_targets(topic, partition, replicas_before, log_dirs_before)
    return {
        replica: path
        for replica, path in _disk_targets(topic, partition, replicas_after, log_dirs_after).items()
        if replica[2] in replicas_before and before.get(replica) != path
    }


class PlanMove(models.Model):
    """One partition of a plan: its replica list before and after."""

    plan = models.ForeignKey(Plan, on_delete=models.CASCADE, related_name="moves")
    topic = models.CharField(max_length=249)
    partition = models.IntegerField()
    replicas_before = models.JSONField()
    replicas_after = models.JSONField()
    # JBOD: each replica's log dir, aligned with replicas_before / replicas_after ("any":
    # the broker chooses); null when the plan names no dirs / the snapshot knew none.
    log_dirs_before = models.JSONField(null=True, blank=True)
    log_dirs_after = models.JSONField(null=True, blank=True)
    # Bytes to copy: one replica's size times the replicas added.
    bytes = models.BigIntegerField(default=0)
    # Bytes to copy between the dirs of a broker (JBOD): the replicas moved there
    # (dir_copies); apart from `bytes`, which the network throttle's estimate reads.
    bytes_dirs = models.BigIntegerField(default=0, db_default=0)
    goals = models.JSONField(default=list, blank=True)
    state = models.CharField(max_length=16, choices=MoveState.choices, default=MoveState.PENDING)
    batch = models.PositiveIntegerField(null=True, blank=True)
    # How many times the executor sent this move to Kafka; more than 1 only after a
    # crash between recording a batch and Kafka accepting it.
    submissions = models.PositiveIntegerField(default=0)
    bytes_done = models.BigIntegerField(default=0)
    # What the new replicas held when the move finished: the bytes really copied.
    bytes_copied = models.BigIntegerField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # Last time bytes_done grew: a move copying nothing for EXECUTOR_STALL_TIMEOUT is failed.
    progressed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["plan", "topic", "partition"]
        constraints = [
            models.UniqueConstraint(
                fields=["plan", "topic", "partition"], name="unique_plan_partition"
            )
        ]

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}: {self.replicas_before} -> {self.replicas_after}"

    @property
    def key(self) -> tuple[str, int]:
        """(topic, partition): how Kafka requests name the partition."""
        return (self.topic, self.partition)

    @property
    def disk_targets(self) -> dict[tuple[str, int, int], str]:
        """{(topic, partition, broker): dir} of the replicas the plan places in a dir."""
        return _disk_targets(self.topic, self.partition, self.replicas_after, self.log_dirs_after)

    @property
    def disk_sources(self) -> dict[tuple[str, int, int], str]:
        """The same for the dirs before: where a rollback moves the replicas back to."""
        return _disk_targets(self.topic, self.partition, self.replicas_before, self.log_dirs_before)

    @property
    def dir_copies(self) -> dict[tuple[str, int, int], str]:
        """The dir targets of replicas that stay on their broker and change dir there."""
        return dir_copies_of(
            topic=self.topic,
            partition=self.partition,
            replicas_before=self.replicas_before,
            log_dirs_before=self.log_dirs_before,
            replicas_after=self.replicas_after,
            log_dirs_after=self.log_dirs_after,
        )

    @property
    def added(self) -> list[int]:
        return [b for b in self.replicas_after if b not in self.replicas_before]

    @property
    def removed(self) -> list[int]:
        return [b for b in self.replicas_before if b not in self.replicas_after]

    @property
    def leader_only(self) -> bool:
        # A move naming dirs (JBOD) may copy data between the dirs of its brokers.
        return sorted(self.replicas_before) == sorted(self.replicas_after) and not self.disk_targets


class Execution(models.Model):
    """Everything a (re)started executor needs beyond what Kafka itself reports."""

    plan = models.OneToOneField(Plan, on_delete=models.CASCADE, related_name="execution")
    # Lease: only the worker holding it may step the plan; a dead worker's lease expires.
    lease_owner = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)
    # Operator controls while it runs: paused sends no new batch (what is in flight
    # finishes); the overrides win over the cluster policy (None: the policy's value).
    paused = models.BooleanField(default=False)
    throttle_rate = models.BigIntegerField(
        null=True, blank=True, help_text="Replication throttle (bytes/s) for this run; 0: none."
    )
    max_moves_per_broker = models.PositiveIntegerField(null=True, blank=True)
    max_moves_cluster = models.PositiveIntegerField(null=True, blank=True)
    # The bounds an approver set (at approval, or tuning later): an operator may go below
    # them, not above, and may not remove the throttle. Empty: the policy's values.
    approved_throttle_rate = models.BigIntegerField(null=True, blank=True, editable=False)
    approved_max_moves_per_broker = models.PositiveIntegerField(
        null=True, blank=True, editable=False
    )
    approved_max_moves_cluster = models.PositiveIntegerField(null=True, blank=True, editable=False)
    # What was throttled (rate, brokers, topics), so cleanup deletes exactly that.
    # The canary steers throttle_rate (services/throttle_auto.py); an operator's own
    # throttle turns it off.
    throttle_auto = models.BooleanField(default=False, db_default=False)
    # Until the objective first breaks, the adaptive throttle doubles (a slow start).
    throttle_auto_doubling = models.BooleanField(default=True, db_default=True)
    # Canary rounds in a row outside the objective, not yet acted on.
    throttle_auto_misses = models.PositiveIntegerField(default=0, db_default=0)
    # Partitions outside the plan under-replicated when the adaptive throttle started:
    # more of them later breaks its objective.
    throttle_auto_under_replicated = models.PositiveIntegerField(null=True, blank=True)
    throttle = models.JSONField(default=dict, blank=True)
    throttle_applied = models.BooleanField(default=False)
    batches = models.PositiveIntegerField(default=0)
    leaders_elected = models.BooleanField(default=False)
    election_attempts = models.PositiveIntegerField(default=0)
    bytes_total = models.BigIntegerField(default=0)
    bytes_done = models.BigIntegerField(default=0)
    rate_bytes_per_sec = models.FloatField(null=True, blank=True)
    eta_seconds = models.FloatField(null=True, blank=True)
    # Times a worker started stepping this plan: above 1 after a resume.
    runs = models.PositiveIntegerField(default=0)
    consecutive_errors = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    # Target brokers of running moves seen dead, {"id": ISO time first seen dead}: a move
    # whose target stays dead beyond EXECUTOR_DEAD_TARGET_GRACE is cancelled and failed.
    dead_brokers = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"execution of plan #{self.plan_id}"


class BrokerDrain(models.Model):
    """A broker an operator drained (a completed remove-brokers plan): no plan places a
    replica on it and the periodic balancer does not fill it, until an operator
    undrains it (the row is then deleted, audited). Unlike the policy's
    excluded_brokers (left alone, replicas stay), a drained broker is kept empty."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="drains")
    node_id = models.IntegerField()
    drained_at = models.DateTimeField()
    drained_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The remove-brokers plan that emptied it.
    plan = models.ForeignKey(
        Plan, null=True, blank=True, on_delete=models.SET_NULL, related_name="drains"
    )

    class Meta:
        ordering = ["cluster", "node_id"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "node_id"], name="unique_cluster_drain")
        ]

    def __str__(self) -> str:
        return f"broker {self.node_id} of {self.cluster.name} drained"


class BrokerDemotion(models.Model):
    """A broker an operator demoted (a completed demote plan): it leads nothing another
    replica can lead and goes last in every replica list, in every plan the balancer
    makes, until an operator undemotes it (the row is then deleted, audited). Cruise
    Control's demote_broker, kept: for a broker under maintenance, or a slow one."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="demotions")
    node_id = models.IntegerField()
    demoted_at = models.DateTimeField()
    demoted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The demote plan that moved its leadership off.
    plan = models.ForeignKey(
        Plan, null=True, blank=True, on_delete=models.SET_NULL, related_name="demotions"
    )

    class Meta:
        ordering = ["cluster", "node_id"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "node_id"], name="unique_cluster_demotion")
        ]

    def __str__(self) -> str:
        return f"broker {self.node_id} of {self.cluster.name} demoted"


class SlowBroker(models.Model):
    """A broker the canary finds slow through no load of its own (apps/canary): every
    canary partition it holds is out of its latency band, one without it is in. The
    periodic balancer proposes to demote it; the flag goes when the canary finds it
    fast again (a demotion stays until an operator undemotes the broker)."""

    cluster = models.ForeignKey(Cluster, on_delete=models.CASCADE, related_name="slow_brokers")
    node_id = models.IntegerField()
    flagged_at = models.DateTimeField()
    reason = models.CharField(max_length=300)

    class Meta:
        ordering = ["cluster", "node_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "node_id"], name="unique_cluster_slow_broker"
            )
        ]

    def __str__(self) -> str:
        return f"broker {self.node_id} of {self.cluster.name} slow"
