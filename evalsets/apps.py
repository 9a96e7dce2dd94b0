from django.apps import AppConfig


class EvalsetsConfig(AppConfig):
    name = "evalsets"
    verbose_name = "Evalsets and the verify gate"

    def ready(self):
        from evalsets import receivers
        from loopweb.runs.hooks import run_pushed
        from loopweb.runs.models import Run

        run_pushed.connect(receivers.run_pushed, sender=Run, dispatch_uid="evalsets.grains")
