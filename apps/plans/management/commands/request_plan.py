"""Request a plan by hand from the command line, as an operator would on the plans page.

    python manage.py request_plan --cluster demo --user olga --mode remove-brokers \\
        --brokers 3 --reason "decommission rack c"

The plan is proposed (and approved only if the cluster policy's rules say so); its id
and reassignment JSON are printed.
"""

import json

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from apps.clusters.models import Cluster
from apps.plans.errors import PlanServiceError
from apps.plans.services import REQUESTABLE_MODES, plan_request


class Command(BaseCommand):
    help = "Propose a reassignment plan for a cluster (full, add/remove brokers, leaders...)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--cluster", required=True)
        parser.add_argument("--user", required=True, help="Who requests it (needs request_plan).")
        parser.add_argument("--mode", default="full", choices=[m.value for m in REQUESTABLE_MODES])
        parser.add_argument("--brokers", default="", help="Comma-separated broker ids.")
        parser.add_argument(
            "--disks", default="", help="remove-disks: comma-separated BROKER:DIR log dirs."
        )
        parser.add_argument("--reason", default="")
        parser.add_argument("--allow-data-loss", action="store_true")

    def handle(self, *args, **options) -> None:
        cluster = Cluster.objects.filter(name=options["cluster"]).first()
        if cluster is None:
            raise CommandError(f"no cluster named {options['cluster']!r}")
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user named {options['user']!r}")
        try:
            brokers = [int(b) for b in options["brokers"].split(",") if b.strip()]
        except ValueError as exc:
            raise CommandError("--brokers takes comma-separated integers, e.g. 4,5") from exc
        try:
            plan = plan_request(
                cluster=cluster,
                user=user,
                mode=options["mode"],
                brokers=brokers,
                disks=[d.strip() for d in options["disks"].split(",") if d.strip()],
                reason=options["reason"],
                allow_data_loss=options["allow_data_loss"],
            )
        except PlanServiceError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(
            f"plan #{plan.pk} {plan.state}: {plan.partition_count} partition(s), "
            f"{plan.bytes_to_move} bytes to copy"
        )
        self.stdout.write(json.dumps(plan.reassignment))
