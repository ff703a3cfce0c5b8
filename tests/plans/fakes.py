"""An in-memory Kafka for unit tests of the executor: same interface as LiveKafka.

Reassignments complete after `ticks` calls to reassignments_list, so a test can
observe batches in flight; calls are recorded so tests can assert what was sent.
"""

from dataclasses import dataclass, field

from apps.plans.kafka_ops import KafkaOpError, PartitionInfo

Key = tuple[str, int]


@dataclass
class FakeKafka:
    assignment: dict[Key, list[int]]
    alive: set[int] = field(default_factory=lambda: {1, 2, 3})
    ticks: int = 1
    sizes: dict[Key, int] = field(default_factory=dict)
    broker_configs: dict[int, dict[str, str]] = field(default_factory=dict)
    topic_configs: dict[str, dict[str, str]] = field(default_factory=dict)
    leaders: dict[Key, int] = field(default_factory=dict)
    in_flight: dict[Key, dict] = field(default_factory=dict)
    alter_calls: list[dict] = field(default_factory=list)
    elect_calls: list[tuple[list[Key], bool]] = field(default_factory=list)
    config_writes: list[tuple[dict, dict]] = field(default_factory=list)
    refuse: dict[Key, str] = field(default_factory=dict)
    fail_next: int = 0  # raise KafkaOpError on this many next calls of any kind
    max_in_flight_seen: int = 0
    # Replica lists a lagging broker still reports, whatever the controller says.
    stale_metadata: dict[Key, list[int]] = field(default_factory=dict)
    _age: dict[Key, int] = field(default_factory=dict)
    # JBOD: {(topic, partition, broker): dir} of current replicas; a dir target for a
    # replica the broker hosts lands after `ticks` calls to replica_log_dirs, one for a
    # replica it does not host yet is refused (REPLICA_NOT_AVAILABLE), as Kafka does.
    replica_dirs: dict[tuple[str, int, int], str] = field(default_factory=dict)
    dir_moves: dict[tuple[str, int, int], list] = field(default_factory=dict)
    dir_alter_calls: list[dict] = field(default_factory=list)

    def _maybe_fail(self) -> None:
        if self.fail_next:
            self.fail_next -= 1
            raise KafkaOpError("fake: broker not available")

    def partitions_describe(self, keys):
        self._maybe_fail()
        out = {}
        for k in keys:
            if k not in self.assignment:
                continue
            replicas = list(self.assignment[k])
            if k in self.in_flight:
                replicas = self.in_flight[k]["replicas"]
            replicas = self.stale_metadata.get(k, replicas)
            leader = self.leaders.get(k, replicas[0])
            out[k] = PartitionInfo(replicas=replicas, isr=list(replicas), leader=leader)
        return out

    def brokers_alive(self):
        self._maybe_fail()
        return set(self.alive)

    def reassignments_list(self, keys):
        self._maybe_fail()
        # Time passes: reassignments older than `ticks` complete.
        for k in list(self.in_flight):
            self._age[k] = self._age.get(k, 0) + 1
            if self._age[k] > self.ticks:
                target = self.in_flight.pop(k)["target"]
                # As Kafka: the leader stays unless it was removed; no preferred election.
                leader = self.leaders.get(k, self.assignment[k][0])
                self.leaders[k] = leader if leader in target else target[0]
                self.assignment[k] = target
        return {
            k: {"replicas": v["replicas"], "adding": v["adding"], "removing": v["removing"]}
            for k, v in self.in_flight.items()
            if k in set(keys)
        }

    def reassignments_alter(self, moves):
        self._maybe_fail()
        self.alter_calls.append(dict(moves))
        result = {}
        for k, target in moves.items():
            if k in self.refuse:
                result[k] = self.refuse[k]
                continue
            if target is None:
                if k in self.in_flight:
                    # As Kafka: back to the original set, in the in-flight list's order.
                    flight = self.in_flight.pop(k)
                    before = set(self.assignment[k])
                    self.assignment[k] = [b for b in flight["replicas"] if b in before]
                    result[k] = None
                else:
                    result[k] = "NoReassignmentInProgressError"
                continue
            before = self.assignment[k]
            adding = [b for b in target if b not in before]
            removing = [b for b in before if b not in target]
            if not adding and not removing:
                self.assignment[k] = list(target)  # reordering: immediate
                result[k] = None
                continue
            self.in_flight[k] = {
                "target": list(target),
                "replicas": list(target) + removing,
                "adding": adding,
                "removing": removing,
            }
            self._age[k] = 0
            result[k] = None
        self.max_in_flight_seen = max(self.max_in_flight_seen, len(self.in_flight))
        return result

    def replica_log_dirs_alter(self, targets):
        self._maybe_fail()
        self.dir_alter_calls.append(dict(targets))
        out = {}
        for replica, path in targets.items():
            topic, partition, broker = replica
            if broker not in self.assignment.get((topic, partition), []):
                out[replica] = "ReplicaNotAvailableError"
                continue
            moving = self.dir_moves.get(replica)
            if self.replica_dirs.get(replica) == path:
                # The dir it is in: a copy elsewhere is dropped (its future replica), as Kafka does.
                self.dir_moves.pop(replica, None)
            # The same target again leaves a copy in progress alone, as Kafka does.
            elif moving is None or moving[0] != path:
                self.dir_moves[replica] = [path, self.ticks]
            out[replica] = None
        return out

    def replica_log_dirs(self):
        self._maybe_fail()
        for replica, move in list(self.dir_moves.items()):
            move[1] -= 1
            if move[1] <= 0:
                self.replica_dirs[replica] = move[0]
                del self.dir_moves[replica]
        return dict(self.replica_dirs)

    def reassignments_cancel(self, keys):
        return self.reassignments_alter(dict.fromkeys(keys))

    def configs_write(self, brokers, topics):
        self._maybe_fail()
        self.config_writes.append((brokers, topics))
        for target, values in [(self.broker_configs, brokers), (self.topic_configs, topics)]:
            for name, entries in values.items():
                current = target.setdefault(name, {})
                for key, value in entries.items():
                    if value is None:
                        current.pop(key, None)
                    else:
                        current[key] = value
                if not current:
                    target.pop(name)

    def broker_rates_wait(self, brokers, rate, timeout):
        return all(
            self.broker_configs.get(b, {}).get("leader.replication.throttled.rate") == rate
            for b in brokers
        )

    def leaders_elect(self, keys, unclean=False):
        self._maybe_fail()
        self.elect_calls.append((list(keys), unclean))
        for k in keys:
            self.leaders[k] = self.assignment[k][0]
        return {k: None for k in keys}

    def replica_sizes(self):
        self._maybe_fail()
        out = {}
        for (t, p), size in self.sizes.items():
            for b in self.assignment.get((t, p), []):
                out[(t, p, b)] = size
            if (t, p) in self.in_flight:
                for b in self.in_flight[(t, p)]["adding"]:
                    out[(t, p, b)] = size // 2  # half copied
        return out

    def replica_future_sizes(self):
        self._maybe_fail()
        # A copy between dirs in progress: half copied.
        return {r: self.sizes.get(r[:2], 0) // 2 for r in self.dir_moves}

    def throttles_left(self) -> bool:
        return bool(self.broker_configs) or bool(self.topic_configs)


def run_to_end(plan, kafka: FakeKafka, limit: int = 100) -> int:
    """Step the plan's execution on `kafka` until it ends (the plan refreshed); the steps."""
    from apps.plans.executor import execution_step

    for step in range(1, limit):
        if execution_step(plan=plan, kafka=kafka):
            plan.refresh_from_db()
            return step
    raise AssertionError("plan did not finish")
