from django.conf import settings
from django.db import models

from .work import Run

#: The longest note an override carries.
NOTE_MAX = 2000


class ChecklistOverride(models.Model):
    """A reviewer's word on one checklist item of a run: passed or not, and why. Kept, never
    edited: a later override of the item stands in its place, whoever made it, and the run's
    stored rating folds in the one that stands for each item (``loopweb.runs.overrides``)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="overrides")
    # Kept when the account goes: the stored rating it helped decide stays explained.
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="checklist_overrides",
    )
    item = models.CharField(max_length=100)
    passed = models.BooleanField()
    note = models.TextField(blank=True, max_length=NOTE_MAX)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["run", "id"], name="override_of_run")]

    def __str__(self) -> str:
        word = "passed" if self.passed else "failed"
        return f"run {self.run_id}: {self.item} {word} ({self.reviewer})"
