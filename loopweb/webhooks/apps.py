from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "loopweb.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from django.db.models.signals import post_save

        from evalsets.models import AdvisoryFlag, OutcomeResult, RevertDraft
        from ladders import lifecycle
        from loopweb.webhooks import receivers

        lifecycle.dispatch_started.connect(
            receivers.dispatch_started, dispatch_uid="webhooks.dispatch_started"
        )
        lifecycle.dispatch_ended.connect(
            receivers.dispatch_ended, dispatch_uid="webhooks.dispatch_ended"
        )
        lifecycle.climbers_blocked.connect(
            receivers.climbers_blocked, dispatch_uid="webhooks.climbers_blocked"
        )
        lifecycle.dispatch_needs_attention.connect(
            receivers.dispatch_needs_attention, dispatch_uid="webhooks.dispatch_needs_attention"
        )
        post_save.connect(
            receivers.revert_draft_saved, sender=RevertDraft, dispatch_uid="webhooks.regressed"
        )
        post_save.connect(
            receivers.advisory_flag_saved,
            sender=AdvisoryFlag,
            dispatch_uid="webhooks.held_costlier",
        )
        post_save.connect(
            receivers.outcome_result_saved,
            sender=OutcomeResult,
            dispatch_uid="webhooks.inconclusive",
        )
