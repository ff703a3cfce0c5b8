"""Token views: a user obtains (a new one each time: only its digest is kept) or
revokes their own API token."""

from drf_spectacular.utils import extend_schema
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from apps.audit.services import client_address_get

from ..common.serializers import ErrorSerializer
from ..services import token_create, token_revoke


class TokenObtainView(ObtainAuthToken):
    """POST username and password: a new API token for the user, replacing any earlier
    one (audited); shown only in this answer. Failed attempts count towards the sign-in
    lockout like the sign-in page's."""

    # ObtainAuthToken names DRF's unbounded parsers; the API's bounded ones instead.
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES

    def post(self, request: Request, *args, **kwargs) -> Response:
        serializer = self.get_serializer(data=request.data)
        if not serializer.is_valid():
            # django-axes refused the attempt: answer as its middleware does for pages.
            if getattr(request, "axes_locked_out", False):
                return Response({"detail": "too many failed sign-ins: try again later"}, status=429)
            raise ValidationError(serializer.errors)
        key = token_create(
            user=serializer.validated_data["user"],
            client_address=client_address_get(request=request),
        )
        return Response({"token": key})


class TokenRevokeView(APIView):
    """POST: revoke the caller's own API token (audited); 404 if there is none."""

    permission_classes = [IsAuthenticated]

    @extend_schema(request=None, responses={204: None, 404: ErrorSerializer})
    def post(self, request: Request) -> Response:
        revoked = token_revoke(
            user=request.user,
            actor=request.user,
            client_address=client_address_get(request=request),
        )
        if not revoked:
            return Response({"detail": "you have no API token"}, status=404)
        return Response(status=204)
