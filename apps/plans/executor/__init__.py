"""The executor: it carries an approved plan out on the cluster, one module per concept.

`runner` (the loop under a `lease`), `step` (one pass: start, batches, progress, end),
`batches` (the next moves sent), `throttles`, `progress`, `doomed` (moves that can't
finish), `leaders` (elections), `endings` (finish, cancel, fail), `resume` (the sweep
after a killed worker). It talks to Kafka through `apps.plans.kafka_ops.KafkaOps` and
changes a plan's state through the lifecycle's `services.transitions`.
"""

from .endings import execution_fail
from .resume import executions_resume
from .runner import execution_run
from .step import execution_step

__all__ = ["execution_fail", "execution_run", "execution_step", "executions_resume"]
