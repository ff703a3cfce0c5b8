"""Celery tasks: each calls one service."""

from celery import shared_task

from .heartbeat import beat_heartbeat_record


@shared_task(ignore_result=True)
def beat_heartbeat() -> None:
    beat_heartbeat_record()
