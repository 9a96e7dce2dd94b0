from django.conf import settings
from django.db import models

from loopweb.reviewing.ranking import LEFT, RIGHT, TIE


class Choice(models.TextChoices):
    LEFT = LEFT
    RIGHT = RIGHT
    TIE = TIE


class PairwiseJudgement(models.Model):
    """One blind comparison: two runs of one rung by two climbers, shown side by side, and which
    the reviewer preferred (or a tie). The climbers are kept here, as the dispatch named them
    when the pair was judged, so the ranking reads no dispatch; the reviewer never saw them."""

    ladder = models.ForeignKey(
        "ladders.Ladder", on_delete=models.CASCADE, related_name="pairwise_judgements"
    )
    dispatch_id = models.CharField(max_length=40)
    rung_id = models.CharField(max_length=40)
    left = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    right = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="+")
    left_climber = models.CharField(max_length=500)
    right_climber = models.CharField(max_length=500)
    choice = models.CharField(max_length=8, choices=Choice.choices)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="pairwise_judgements"
    )
    # "<lower run id>:<higher run id>": the pair whichever side each was shown on.
    pair = models.CharField(max_length=50)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["ladder", "rung_id", "reviewer", "pair"], name="one_judgement_per_pair"
            ),
        ]
        indexes = [models.Index(fields=["ladder", "rung_id"], name="judgement_rung")]

    def __str__(self) -> str:
        return f"{self.left_id} vs {self.right_id}: {self.choice} by {self.reviewer_id}"

    @property
    def winner(self) -> str | None:
        """The winning climber's key, None for a tie."""
        if self.choice == Choice.TIE:
            return None
        return self.left_climber if self.choice == Choice.LEFT else self.right_climber


def pair_key(first: int, second: int) -> str:
    return f"{min(first, second)}:{max(first, second)}"


class ReviewSettings(models.Model):
    """A ladder's reviewing settings, kept beside the ladder: the backlog threshold, and whether
    the backlog stood at or past it when last counted (so ``review.backlog`` is sent once per
    crossing)."""

    ladder = models.OneToOneField(
        "ladders.Ladder", on_delete=models.CASCADE, primary_key=True, related_name="review_settings"
    )
    backlog_threshold = models.PositiveIntegerField(null=True, blank=True)
    backlog_over = models.BooleanField(default=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "review settings"

    def __str__(self) -> str:
        return f"review settings of ladder {self.ladder_id}"
