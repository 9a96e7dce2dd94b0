from django.apps import AppConfig


class HistoryConfig(AppConfig):
    name = "loopweb.history"
    label = "history"
    verbose_name = "History"

    def ready(self):
        from ladders import lifecycle
        from loopweb.history import receivers

        lifecycle.dispatch_started.connect(receivers.on_dispatch_started, dispatch_uid="history")
        lifecycle.dispatch_ended.connect(receivers.on_dispatch_ended, dispatch_uid="history")
        lifecycle.dispatch_replaced.connect(receivers.on_dispatch_replaced, dispatch_uid="history")
        lifecycle.climber_retried.connect(receivers.on_climber_retried, dispatch_uid="history")
        lifecycle.ladder_configured.connect(receivers.on_ladder_configured, dispatch_uid="history")
