"""`Authorization: Token <key>`, checked against the stored digest (models.ApiToken)."""

from rest_framework.authentication import TokenAuthentication
from rest_framework.exceptions import AuthenticationFailed

from .models import ApiToken, token_digest


class DigestTokenAuthentication(TokenAuthentication):
    model = ApiToken

    def authenticate_credentials(self, key: str):
        token = ApiToken.objects.select_related("user").filter(digest=token_digest(key)).first()
        if token is None:
            raise AuthenticationFailed("Invalid token.")
        if not token.user.is_active:
            raise AuthenticationFailed("User inactive or deleted.")
        return (token.user, token)
