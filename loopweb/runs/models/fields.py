"""Field declarations, and the abstract models made of them, that more than one app's models
make alike."""

from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.db import models


def user_reference(related_name: str = "+", **options: Any) -> models.ForeignKey:
    """Who did something, kept as long as their account is: null for none (a script, or before
    it was recorded), and emptied when the account is deleted, so the row stays."""
    return models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name=related_name,
        **options,
    )


def word_choices(words: Iterable[str]) -> list[tuple[str, str]]:
    """The choices of a field that holds one of a pure module's words (snake_case), each
    labelled as a ``TextChoices`` member named after it would be: "held_costlier" reads "Held
    Costlier"."""
    return [(word, word.replace("_", " ").title()) for word in words]


class Named(models.Model):
    """Something people name and find by its name (a ladder, a coverage group, a gg
    configuration, an evalset): listed by name, then in the order made; shown by its name."""

    name = models.CharField(max_length=200)

    class Meta:
        abstract = True
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name
