"""The events a webhook subscription can ask for, and what each one announces."""

DISPATCH_STARTED = "dispatch.started"
DISPATCH_NEEDS_ATTENTION = "dispatch.needs_attention"
DISPATCH_FINISHED = "dispatch.finished"
DISPATCH_STOPPED = "dispatch.stopped"
CLIMBER_BLOCKED = "climber.blocked"
PROPOSAL_REGRESSED = "proposal.regressed"
PROPOSAL_HELD_COSTLIER = "proposal.held_costlier"
PROPOSAL_INCONCLUSIVE = "proposal.inconclusive"
REVIEW_BACKLOG = "review.backlog"
PING = "webhook.ping"

#: What a subscription may list, in the order the console shows them. ``webhook.ping`` is not
#: among them: a ping is sent on request to the one subscription asked, whatever it lists.
EVENTS = {
    DISPATCH_STARTED: "A ladder's dispatch started (Run was pressed)",
    DISPATCH_NEEDS_ATTENTION: (
        "A running dispatch came to need attention: nothing it launched is in flight and only"
        " blocked climbers are left to wait for"
    ),
    DISPATCH_FINISHED: "A dispatch finished: every climber reached its result",
    DISPATCH_STOPPED: "A dispatch was stopped, and how many jobs the Stop cancelled",
    CLIMBER_BLOCKED: "A climber blocked (failing, unlaunchable or unrated), one event each",
    PROPOSAL_REGRESSED: "A proposal regressed on its evalset and a revert draft was opened",
    PROPOSAL_HELD_COSTLIER: "A proposal held but cost more than its bound (an advisory flag)",
    PROPOSAL_INCONCLUSIVE: (
        "A proposal measured worse than its baseline, but by no more than chance explains (its"
        " significance policy): no revert draft, no flag"
    ),
    REVIEW_BACKLOG: "A ladder's runs waiting for review reached the threshold its owner set",
}
