"""Failed sign-ins: counted per username, throttled per username, summarised into the trail.

django-axes locks a (username, address) pair after SIGNIN_FAILURE_LIMIT failures; that
alone lets one guesser spread over many addresses. So failures are also counted per
username over all addresses in fixed windows of SIGNIN_WINDOW_MINUTES: once the current
and the previous window hold SIGNIN_USERNAME_FAILURE_LIMIT of them, the name gets one
attempt per SIGNIN_USERNAME_DELAY_SECONDS (the rest are refused, 429, and not counted).
The real user waits at most that delay; a guesser gets a handful of guesses an hour.

The trail gets one row per closed window and existing username (with the count) and one
row for all unknown names (counts only: a "username" may be a password typed in the
wrong field), instead of one row per attempt.
"""

from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F, Max, Sum
from django.utils import timezone

from .actions import AuthAction
from .models import SigninFailureWindow
from .services import audit_record


def _window() -> timedelta:
    return timedelta(minutes=settings.SIGNIN_WINDOW_MINUTES)


def signin_window_start(*, at: datetime) -> datetime:
    """The start of the fixed window holding `at` (windows are aligned to the epoch)."""
    length = _window().total_seconds()
    return datetime.fromtimestamp(at.timestamp() // length * length, tz=UTC)


def _recent(*, username: str, at: datetime):
    since = signin_window_start(at=at) - _window()
    return SigninFailureWindow.objects.filter(username=username, window_start__gte=since)


def signin_username_failures(*, username: str, at: datetime | None = None) -> int:
    """Failures for this name from any address in the current and the previous window."""
    at = at or timezone.now()
    return _recent(username=username, at=at).aggregate(n=Sum("failures"))["n"] or 0


def signin_username_throttled(*, username: str, at: datetime | None = None) -> bool:
    """True while this name has reached its limit and its last failure is too recent."""
    at = at or timezone.now()
    recent = _recent(username=username, at=at).aggregate(
        n=Sum("failures"), last=Max("last_failure_at")
    )
    if (recent["n"] or 0) < settings.SIGNIN_USERNAME_FAILURE_LIMIT:
        return False
    return at - recent["last"] < timedelta(seconds=settings.SIGNIN_USERNAME_DELAY_SECONDS)


def signin_failure_record(
    *, username: str, client_address: str | None, at: datetime | None = None
) -> SigninFailureWindow:
    """Count one failed sign-in; audit the moment the name reaches its limit (once)."""
    at = at or timezone.now()
    username = username[:150]
    with transaction.atomic():
        window, created = SigninFailureWindow.objects.select_for_update().get_or_create(
            username=username,
            window_start=signin_window_start(at=at),
            defaults={"failures": 1, "last_failure_at": at, "last_address": client_address},
        )
        if not created:
            SigninFailureWindow.objects.filter(pk=window.pk).update(
                failures=F("failures") + 1, last_failure_at=at, last_address=client_address
            )
        total = signin_username_failures(username=username, at=at)
        reached = total >= settings.SIGNIN_USERNAME_FAILURE_LIMIT
        already = _recent(username=username, at=at).filter(throttled_at__isnull=False).exists()
        if reached and not already:
            SigninFailureWindow.objects.filter(pk=window.pk).update(throttled_at=at)
            shown = signin_username_shown(username=username)
            audit_record(
                actor=None,
                action=AuthAction.LOCKED_OUT,
                object_type="auth.user",
                object_repr=shown,
                after={"username": shown, "scope": "username", "failures": total},
                client_address=client_address,
            )
    window.refresh_from_db()
    return window


def signin_username_shown(*, username: str) -> str:
    # An unknown "username" may be a password typed into the wrong field: never shown.
    known = get_user_model().objects.filter(**{get_user_model().USERNAME_FIELD: username})
    return username if known.exists() else "(unknown username)"


def signin_failures_audit(*, at: datetime | None = None) -> int:
    """Summarise every closed, unaudited window into the trail; drop windows no longer
    counted. Returns the number of audit rows written."""
    at = at or timezone.now()
    current = signin_window_start(at=at)
    written = 0
    with transaction.atomic():
        closed = SigninFailureWindow.objects.select_for_update().filter(
            window_start__lt=current, audited=False
        )
        by_start: dict[datetime, list[SigninFailureWindow]] = {}
        for row in closed:
            by_start.setdefault(row.window_start, []).append(row)
        user_model = get_user_model()
        for start, rows in sorted(by_start.items()):
            names = [r.username for r in rows]
            known = set(
                user_model.objects.filter(
                    **{f"{user_model.USERNAME_FIELD}__in": names}
                ).values_list(user_model.USERNAME_FIELD, flat=True)
            )
            span = {"window_start": start, "window_end": start + _window()}
            for row in rows:
                if row.username in known:
                    audit_record(
                        actor=None,
                        action=AuthAction.LOGIN_FAILED,
                        object_type="auth.user",
                        object_repr=row.username,
                        after={"username": row.username, "failures": row.failures, **span},
                        client_address=row.last_address,
                    )
                    written += 1
            unknown = [r for r in rows if r.username not in known]
            if unknown:
                audit_record(
                    actor=None,
                    action=AuthAction.LOGIN_FAILED,
                    object_type="auth.user",
                    object_repr="(unknown usernames)",
                    after={
                        "unknown_usernames": len(unknown),
                        "failures": sum(r.failures for r in unknown),
                        **span,
                    },
                )
                written += 1
        closed.update(audited=True)
        # Older than the previous window: the throttle no longer counts it.
        SigninFailureWindow.objects.filter(
            audited=True, window_start__lt=current - _window()
        ).delete()
    return written
