"""``review.backlog``: the event a ladder's backlog of unreviewed runs sends when it reaches
the threshold its owner set, recorded in the transaction that counted it (the webhooks'
outbox)."""

from django.urls import reverse

from ladders.models import Ladder
from loopweb.webhooks import payloads
from loopweb.webhooks.events import REVIEW_BACKLOG
from loopweb.webhooks.services import News, interested, record


def payload(ladder: Ladder, *, waiting: int, threshold: int) -> tuple[dict, str]:
    ladder_data = payloads.ladder_part(ladder)
    queue = payloads.link(reverse("console:queue", args=[ladder.pk]))
    data = {"ladder": ladder_data, "waiting": waiting, "threshold": threshold, "url": queue}
    text = (
        f"⧗ *{payloads.chat(ladder.name)}* has {waiting} run(s) waiting for review (the"
        f" threshold is {threshold}). <{queue}|Open the review queue>"
    )
    return data, text


def announce(ladder: Ladder, *, waiting: int, threshold: int) -> None:
    to = interested(ladder_id=ladder.pk)
    if not any(s.wants(REVIEW_BACKLOG) for s in to):
        return
    data, text = payload(ladder, waiting=waiting, threshold=threshold)
    record([News(REVIEW_BACKLOG, data, text)], owner_id=ladder.owner_id, to=to)
