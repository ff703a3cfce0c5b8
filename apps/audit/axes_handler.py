"""django-axes' database handler, plus the per-username throttle (apps/audit/signin.py).

Axes locks a (username, address) pair; this also refuses a name that has failed too
often from any address, and counts each failure that was really tried (not the ones
refused) once per username.
"""

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username

from .signin import signin_failure_record, signin_username_throttled


class SigninHandler(AxesDatabaseHandler):
    def is_locked(self, request, credentials: dict | None = None) -> bool:
        if super().is_locked(request, credentials):
            return True
        username = get_client_username(request, credentials)
        return bool(username) and signin_username_throttled(username=str(username))

    def user_login_failed(self, sender, credentials: dict, request=None, **kwargs) -> None:
        # Refused before the password was checked: axes set the flag in authenticate().
        refused = bool(getattr(request, "axes_locked_out", False))
        if request is not None:
            request.signin_refused = refused
        super().user_login_failed(sender, credentials, request=request, **kwargs)
        if request is None or refused:
            return
        username = get_client_username(request, credentials)
        if username:
            signin_failure_record(
                username=str(username), client_address=getattr(request, "axes_ip_address", None)
            )
