from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "loopweb.webhooks"
    label = "webhooks"
    verbose_name = "Webhooks"

    def ready(self):
        from django.db.models.signals import post_save

        from evalsets.models import AdvisoryFlag, OutcomeResult, RevertDraft
        from loopweb.webhooks import receivers

        # Its consumers of the ladder engine's hooks are connected, in order, by
        # loopweb.pipeline.consumers; here, the saves of evalsets' rows it announces.
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
