"""A plan entry may name each replica's target dir in `log_dirs` (BALANCING.md §2):
validate_plan accepts dirs the broker lists and has online, refuses others, and counts a
dir change of a replica that stays on its broker as a change."""

from __future__ import annotations

from apps.balancer.engine.plan import validate_plan

TB = 10**12


def snapshot() -> dict:
    return {
        "brokers": [
            {
                "id": 1,
                "log_dirs": [
                    {"path": "/d/a", "total": TB, "usable": TB // 2},
                    {"path": "/d/b", "total": TB, "usable": TB},
                    {"path": "/d/off", "total": TB, "usable": TB, "online": False},
                ],
            },
            {"id": 2, "log_dirs": [{"path": "/d/a", "total": TB, "usable": TB}]},
            {"id": 3},  # lists no dirs
        ],
        "partitions": [
            {"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/d/a", "/d/a"]},
        ],
    }


def plan(replicas: list[int], log_dirs: object | None = None) -> dict:
    entry: dict = {"topic": "t", "partition": 0, "replicas": replicas}
    if log_dirs is not None:
        entry["log_dirs"] = log_dirs
    return {"version": 1, "partitions": [entry]}


def test_it_accepts_a_move_between_dirs_of_the_same_broker() -> None:
    assert validate_plan(plan([1, 2], ["/d/b", "any"]), snapshot()) == []


def test_it_accepts_a_move_to_another_broker_naming_its_dir() -> None:
    assert validate_plan(plan([1, 3], ["any", "any"]), snapshot()) != []  # names no dir
    assert validate_plan(plan([2, 1], ["/d/a", "/d/b"]), snapshot()) == []


def test_it_refuses_a_dir_the_broker_does_not_list() -> None:
    problems = validate_plan(plan([1, 2], ["/d/zzz", "any"]), snapshot())

    assert problems == ["t-0: log dir '/d/zzz' is not one that broker 1 lists"]


def test_it_refuses_a_dir_on_a_broker_that_lists_none() -> None:
    problems = validate_plan(plan([1, 3], ["any", "/d/a"]), snapshot())

    assert problems == ["t-0: log dir '/d/a' is not one that broker 3 lists"]


def test_it_refuses_an_offline_dir() -> None:
    problems = validate_plan(plan([1, 2], ["/d/off", "any"]), snapshot())

    assert problems == ["t-0: log dir '/d/off' of broker 1 is offline"]


def test_it_refuses_dirs_not_aligned_with_replicas() -> None:
    problems = validate_plan(plan([1, 2], ["/d/b"]), snapshot())

    assert problems == ["t-0: log_dirs must be a list aligned with replicas"]


def test_it_refuses_an_entry_whose_replicas_and_dirs_stay() -> None:
    problems = validate_plan(plan([1, 2], ["/d/a", "any"]), snapshot())

    assert problems == ["t-0: listed but unchanged"]


def test_it_keeps_refusing_unknown_keys() -> None:
    entry = {"topic": "t", "partition": 0, "replicas": [2, 1], "dirs": ["/d/a", "/d/b"]}

    problems = validate_plan({"version": 1, "partitions": [entry]}, snapshot())

    assert len(problems) == 1 and "must have exactly" in problems[0]
