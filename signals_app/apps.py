from django.apps import AppConfig


class SignalsAppConfig(AppConfig):
    name = "signals_app"
    verbose_name = "Signals and acceptance"

    def ready(self):
        from loopweb.runs import hooks
        from signals_app import receivers

        hooks.run_pushing.connect(receivers.on_run_pushing, dispatch_uid="signals_app.rule")
        hooks.run_pushed.connect(receivers.on_run_pushed, dispatch_uid="signals_app.push")
        hooks.run_reviewed.connect(receivers.on_run_reviewed, dispatch_uid="signals_app.review")
