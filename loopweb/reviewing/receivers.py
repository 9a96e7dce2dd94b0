"""What reviewing does when a run is pushed or reviewed: count the backlog of the ladders that
asked to hear of it (docs/reviewing.md, "A backlog of unreviewed runs")."""

from loopweb.reviewing import services


def on_run_pushed(sender, run, **kwargs) -> None:
    services.check_backlogs(cell_key=run.cell_key)


def on_run_reviewed(sender, review, **kwargs) -> None:
    services.check_backlogs(cell_key=review.run.cell_key)
