"""Sign-ins, failed sign-ins and lockouts (django-axes) go to the audit trail."""

from axes.signals import user_locked_out
from django.contrib.auth.signals import user_logged_in, user_logged_out, user_login_failed
from django.dispatch import receiver

from .actions import AuthAction
from .services import audit_record, client_address_get


@receiver(user_logged_in, dispatch_uid="audit_user_logged_in")
def _logged_in(sender, request, user, **kwargs) -> None:
    audit_record(
        actor=user,
        action=AuthAction.LOGIN,
        obj=user,
        client_address=client_address_get(request=request),
    )


@receiver(user_logged_out, dispatch_uid="audit_user_logged_out")
def _logged_out(sender, request, user, **kwargs) -> None:
    if user is None:
        return
    audit_record(
        actor=user,
        action=AuthAction.LOGOUT,
        obj=user,
        client_address=client_address_get(request=request),
    )


@receiver(user_login_failed, dispatch_uid="audit_user_login_failed")
def _login_failed(sender, credentials, request=None, **kwargs) -> None:
    # Django already masks secrets in `credentials`; keep only the name that was tried.
    username = str(credentials.get("username", ""))[:150]
    audit_record(
        actor=None,
        action=AuthAction.LOGIN_FAILED,
        object_type="auth.user",
        object_repr=username,
        after={"username": username},
        client_address=client_address_get(request=request),
    )


@receiver(user_locked_out, dispatch_uid="audit_user_locked_out")
def _locked_out(sender, request, username, ip_address, **kwargs) -> None:
    """Too many failures for this name from this address: refused until the cool-off ends."""
    name = str(username or "")[:150]
    audit_record(
        actor=None,
        action=AuthAction.LOCKED_OUT,
        object_type="auth.user",
        object_repr=name,
        after={"username": name},
        client_address=ip_address or client_address_get(request=request),
    )
