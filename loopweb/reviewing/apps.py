from django.apps import AppConfig


class ReviewingConfig(AppConfig):
    name = "loopweb.reviewing"
    label = "reviewing"
    verbose_name = "Reviewing"

    def ready(self):
        from loopweb.reviewing import receivers
        from loopweb.runs import hooks

        hooks.run_pushed.connect(receivers.on_run_pushed, dispatch_uid="reviewing.run_pushed")
        hooks.run_reviewed.connect(receivers.on_run_reviewed, dispatch_uid="reviewing.run_reviewed")
