"""Sign-ins and lockouts (django-axes) go to the audit trail; failed sign-ins are counted
and summarised per window (apps/audit/signin.py), not written one by one."""

from axes.signals import user_locked_out
from django.contrib.auth.signals import user_logged_in, user_logged_out
from django.dispatch import receiver

from .actions import AuthAction
from .services import audit_record, client_address_get
from .signin import signin_username_shown


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


@receiver(user_locked_out, dispatch_uid="audit_user_locked_out")
def _locked_out(sender, request, username, ip_address, **kwargs) -> None:
    """Too many failures for this name from this address: refused until the cool-off ends.

    Audited when the lockout begins; the attempts it refuses afterwards are not."""
    if getattr(request, "signin_refused", False):
        return
    name = signin_username_shown(username=str(username or "")[:150])
    audit_record(
        actor=None,
        action=AuthAction.LOCKED_OUT,
        object_type="auth.user",
        object_repr=name,
        after={"username": name},
        client_address=ip_address or client_address_get(request=request),
    )
