from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import authentication, exceptions

from loopweb.runs.models import ApiToken
from loopweb.runs.models.accounts import token_digest


class HashedTokenAuthentication(authentication.BaseAuthentication):
    """``Authorization: Token <key>``; only the key's SHA-256 digest is stored."""

    keyword = "Token"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).split()
        if not header or header[0].lower() != self.keyword.lower().encode():
            return None
        if len(header) != 2:
            raise exceptions.AuthenticationFailed("Invalid token header.")
        try:
            raw = header[1].decode()
        except UnicodeError as exc:
            raise exceptions.AuthenticationFailed("Invalid token header.") from exc
        try:
            # A digest is unique: ``get`` asks for it without the ordering ``first`` would add
            # to a query every API request makes.
            token = ApiToken.objects.select_related("user", "user__account").get(
                digest=token_digest(raw)
            )
        except ApiToken.DoesNotExist:
            token = None
        if token is None or not token.user.is_active:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.expires_at is not None and token.expires_at <= timezone.now():
            raise exceptions.AuthenticationFailed("Token has expired.")
        return token.user, token

    def authenticate_header(self, request):
        return self.keyword


class HashedTokenScheme(OpenApiAuthenticationExtension):
    target_class = "loopweb.runs.auth.HashedTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "Token-based authentication: `Token <key>`",
        }
