"""Celery tasks: each calls one service."""

from celery import shared_task

from .signin import signin_failures_audit


@shared_task(ignore_result=True)
def signin_failures_summarize() -> None:
    signin_failures_audit()
