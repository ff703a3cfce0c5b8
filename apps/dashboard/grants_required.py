"""The dashboard's door: a view needs its permission on some cluster; the view itself
then resolves its cluster among those granted (404 for the others)."""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse

from apps.access.selectors import user_holds_anywhere


def grant_required(perm: str) -> Callable:
    """Signed in (else to the sign-in page) and holding `perm` on some cluster (else 403)."""

    def decorate(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @wraps(view)
        def checked(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not user_holds_anywhere(user=request.user, perm=perm):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        return login_required(checked)

    return decorate
