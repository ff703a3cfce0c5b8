"""The beat's tick: a leader comes back to renew its lock long before it expires, even
when no entry is due for longer."""

from __future__ import annotations

from django_celery_beat.schedulers import DatabaseScheduler

from balancer_site.beat import LeaderDatabaseScheduler


class _Leading:
    retry_after = 1.5

    def __init__(self, held: bool) -> None:
        self._held = held

    def held(self) -> bool:
        return self._held


def _scheduler(*, held: bool) -> LeaderDatabaseScheduler:
    scheduler = LeaderDatabaseScheduler.__new__(LeaderDatabaseScheduler)
    scheduler.leadership = _Leading(held)
    scheduler.max_interval = 5
    return scheduler


def test_it_brings_the_leader_back_within_a_quarter_of_its_lock(monkeypatch) -> None:
    monkeypatch.setattr(DatabaseScheduler, "tick", lambda self, *a, **k: 5.0)

    assert _scheduler(held=True).tick() == 1.5


def test_it_keeps_the_schedulers_sooner_answer(monkeypatch) -> None:
    monkeypatch.setattr(DatabaseScheduler, "tick", lambda self, *a, **k: 0.2)

    assert _scheduler(held=True).tick() == 0.2


def test_it_sends_nothing_while_following(monkeypatch) -> None:
    def sent(self, *args, **kwargs) -> float:
        raise AssertionError("a follower ticked the schedule")

    monkeypatch.setattr(DatabaseScheduler, "tick", sent)

    assert _scheduler(held=False).tick() == 1.5
