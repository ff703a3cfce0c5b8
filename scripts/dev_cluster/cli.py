"""The `dev-cluster` command line: arguments, output and exit codes.

Exit codes: 0 ok, 1 error, 2 bad usage/unknown id.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict

from .cluster import UP_TIMEOUT_S, DevCluster
from .errors import DevClusterError, UnknownNodeError
from .leaders import ElectionResult
from .secure import SecureDevCluster


def _print_status(cluster: DevCluster, as_json: bool) -> None:
    nodes = cluster.status()
    redis = cluster.redis_status()
    if as_json:
        print(
            json.dumps(
                {
                    "bootstrap_servers": cluster.bootstrap_servers,
                    "run_dir": str(cluster.run_dir),
                    "options": asdict(cluster.options),
                    "nodes": [asdict(n) for n in nodes],
                    "redis": asdict(redis),
                },
                indent=2,
            )
        )
        return
    bootstrap = f"bootstrap: {cluster.bootstrap_servers}"
    if isinstance(cluster, SecureDevCluster):
        bootstrap = (
            f"bootstrap SASL_SSL: {cluster.bootstrap('SASL_SSL')}   "
            f"mTLS: {cluster.bootstrap('MTLS')}   "
            f"PLAINTEXT (no ACLs, this tool's checks only): {cluster.bootstrap('PLAINTEXT')}"
        )
    print(f"run dir: {cluster.run_dir}   Kafka {cluster.kafka.release}   {bootstrap}")
    print(f"{'id':>4}  {'role':<10}  {'port':>5}  {'rack':<4}  {'pid':>7}  {'state':<8}  metadata")
    for n in nodes:
        md = {None: "-", True: "yes", False: "no"}[n.in_metadata]
        print(
            f"{n.node_id:>4}  {n.role:<10}  {n.port:>5}  {n.rack or '-':<4}  "
            f"{n.pid or '-':>7}  {'running' if n.running else 'stopped':<8}  {md}"
        )
    owner = f"pid {redis.pid}" if redis.pid else "not started by dev-cluster"
    print(f"redis {redis.url}: {'answering' if redis.answering else 'down'} ({owner})")


def _print_strays(cluster: DevCluster) -> None:
    for broker_id, freed in sorted(cluster.strays_freed.items()):
        if freed:
            print(
                f"dev-cluster: broker {broker_id}: deleted {freed / 1e6:.1f} MB of replicas "
                "it no longer holds (Kafka keeps them as -stray dirs and never reads them)"
            )


def up_text(cluster: DevCluster, *, seconds: float) -> str:
    """What `up` prints: the bootstrap list to use; for the secured cluster its secured
    listeners first, the PLAINTEXT one (no ACL for its principal) last and labelled."""
    head = f"dev-cluster: Kafka {cluster.kafka.release} up in {seconds:.1f}s"
    if not isinstance(cluster, SecureDevCluster):
        return f"{head}; bootstrap servers {cluster.bootstrap_servers}"
    return "\n".join(
        [
            f"{head} (secured); register it with one of these listeners:",
            cluster.settings_text(),
            f"PLAINTEXT, not for the balancer (this tool's metadata checks; its principal "
            f"has no ACL): {cluster.bootstrap('PLAINTEXT')}",
        ]
    )


_SECURE_HELP = "the secured companion cluster (SASL_SSL/SCRAM, mTLS, ACLs; docs/security.md)"


def _print_election(election: ElectionResult | None) -> None:
    if election is None or not (election.elected or election.pending):
        return
    print(f"dev-cluster: {election.elected} partition(s) handed back to their preferred leader")
    if election.pending:
        print(
            f"dev-cluster: warning: {election.pending} partition(s) still not led by their "
            "preferred replica (not yet in sync)",
            file=sys.stderr,
        )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dev-cluster", description="Local real Apache Kafka (KRaft) dev cluster + Redis."
    )
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_up = sub.add_parser("up", help="start controller(s) + 3 brokers (+ Redis) and wait")
    p_up.add_argument("--no-redis", action="store_true", help="don't touch Redis")
    p_up.add_argument(
        "--controllers",
        type=int,
        help="KRaft controllers (1 or 3 or 5; default: as last started, else 1)",
    )
    p_up.add_argument(
        "--kafka-version",
        metavar="LINE",
        help="Kafka release line: 4.3 (default) or 3.9 (also as 4.3.1 / 3.9.2); "
        "fixed once the run dir holds data",
    )
    p_up.add_argument(
        "--broker-heap",
        metavar="SIZE",
        help="broker -Xmx, e.g. 2g (default: KAFKA_DEV_BROKER_HEAP, else as last started, "
        "else sized to the partitions each broker holds)",
    )
    p_up.add_argument(
        "--partitions-hint",
        type=int,
        metavar="N",
        help="size broker heaps for about N partitions to be created after `up` (each broker "
        "as if it held a replica of every one; default: as last started, else what the "
        "log dirs hold)",
    )
    p_up.add_argument(
        "--log-dirs",
        type=int,
        metavar="N",
        help="log dirs per broker (JBOD; default: as last started, else 1); "
        "fixed once the run dir holds data",
    )
    p_up.add_argument("--timeout", type=float, default=UP_TIMEOUT_S)
    p_up.add_argument("--secure", action="store_true", help=_SECURE_HELP)
    p_down = sub.add_parser("down", help="stop the nodes (and Redis) this tool started")
    p_down.add_argument("--no-redis", action="store_true", help="leave Redis running")
    p_down.add_argument("--secure", action="store_true", help=_SECURE_HELP)
    p_status = sub.add_parser("status", help="show nodes, pids and metadata view")
    p_status.add_argument("--json", action="store_true")
    p_status.add_argument("--secure", action="store_true", help=_SECURE_HELP)
    p_stop = sub.add_parser("stop-broker", help="stop one broker (controlled shutdown)")
    p_stop.add_argument("broker_id", type=int)
    p_stop.add_argument("--kill", action="store_true", help="SIGKILL instead of SIGTERM")
    p_stop.add_argument("--secure", action="store_true", help=_SECURE_HELP)
    p_start = sub.add_parser("start-broker", help="start one broker and wait for it")
    p_start.add_argument("broker_id", type=int)
    p_start.add_argument("--secure", action="store_true", help=_SECURE_HELP)
    p_stop_c = sub.add_parser("stop-controller", help="stop one controller (e.g. 100)")
    p_stop_c.add_argument("controller_id", type=int)
    p_stop_c.add_argument("--kill", action="store_true", help="SIGKILL instead of SIGTERM")
    p_start_c = sub.add_parser("start-controller", help="start one controller, wait for it")
    p_start_c.add_argument("controller_id", type=int)
    sub.add_parser("active-controller", help="print the id of the active controller")
    sub.add_parser("redis-up", help="ensure Redis answers (start it if needed)")
    sub.add_parser("redis-down", help="stop Redis if this tool started it")
    sub.add_parser("bootstrap-servers", help="print the bootstrap servers string")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        kind = SecureDevCluster if getattr(args, "secure", False) else DevCluster
        cluster = kind(
            controllers=getattr(args, "controllers", None),
            broker_heap=getattr(args, "broker_heap", None),
            kafka_version=getattr(args, "kafka_version", None),
            partitions_hint=getattr(args, "partitions_hint", None),
            log_dirs=getattr(args, "log_dirs", None),
        )
        if args.cmd in ("up", "down", "redis-up", "redis-down"):
            # A person asked for this state: test sessions must not undo it on exit.
            # Only for what the command touches: `up --no-redis` leaves Redis's mark alone.
            touches_redis = not getattr(args, "no_redis", False)
            kinds = {"redis"} if args.cmd.startswith("redis") else {"kafka"}
            cluster.forget_auto_started(kinds | ({"redis"} if touches_redis else set()))
        if args.cmd == "up":
            started = time.monotonic()
            election = cluster.up(redis=not args.no_redis, timeout=args.timeout)
            _print_strays(cluster)
            _print_election(election)
            print(up_text(cluster, seconds=time.monotonic() - started))
        elif args.cmd == "down":
            cluster.down(redis=not args.no_redis)
            print("dev-cluster: down")
        elif args.cmd == "status":
            _print_status(cluster, args.json)
        elif args.cmd == "stop-broker":
            cluster.stop_broker(args.broker_id, kill=args.kill)
            print(f"dev-cluster: broker {args.broker_id} stopped")
        elif args.cmd == "start-broker":
            election = cluster.start_broker(args.broker_id)
            _print_strays(cluster)
            _print_election(election)
            print(f"dev-cluster: broker {args.broker_id} running and in metadata")
        elif args.cmd == "stop-controller":
            cluster.stop_controller(args.controller_id, kill=args.kill)
            print(f"dev-cluster: controller {args.controller_id} stopped")
        elif args.cmd == "start-controller":
            cluster.start_controller(args.controller_id)
            print(f"dev-cluster: controller {args.controller_id} running and caught up")
        elif args.cmd == "active-controller":
            leader = cluster.active_controller()
            if leader is None:
                raise DevClusterError("no active controller (is the cluster up?)")
            print(leader)
        elif args.cmd == "redis-up":
            print(f"dev-cluster: redis answering at {cluster.redis_up()}")
        elif args.cmd == "redis-down":
            cluster.redis_down()
            print("dev-cluster: redis stopped (if dev-cluster had started it)")
        elif args.cmd == "bootstrap-servers":
            print(cluster.bootstrap_servers)
    except UnknownNodeError as exc:
        print(f"dev-cluster: error: {exc}", file=sys.stderr)
        return 2
    except DevClusterError as exc:
        print(f"dev-cluster: error: {exc}", file=sys.stderr)
        return 1
    return 0
