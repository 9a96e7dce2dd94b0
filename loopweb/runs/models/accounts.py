import hashlib
import secrets

from django.conf import settings
from django.db import models


class Role(models.TextChoices):
    OWNER = "owner"
    REVIEWER = "reviewer"
    DRIVER = "driver"


class Account(models.Model):
    """One per user: the role and, for owners, the default runs-in-flight limit."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="account"
    )
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.OWNER)
    runs_in_flight_limit = models.PositiveIntegerField(
        default=settings.LOOPWEB_DEFAULT_RUNS_IN_FLIGHT
    )

    def __str__(self) -> str:
        return f"{self.user} ({self.role})"


def token_digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiTokenManager(models.Manager):
    def issue(self, user, name: str = "") -> tuple["ApiToken", str]:
        """Create a token and return it with its raw key, which is never stored."""
        raw = secrets.token_hex(24)
        token = self.create(user=user, digest=token_digest(raw), prefix=raw[:8], name=name)
        return token, raw


class ApiToken(models.Model):
    """An API token, stored as a SHA-256 digest; the raw key is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    digest = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    name = models.CharField(max_length=100, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenManager()

    def __str__(self) -> str:
        return f"{self.prefix}… for {self.user}"
