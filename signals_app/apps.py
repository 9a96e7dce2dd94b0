from django.apps import AppConfig


class SignalsAppConfig(AppConfig):
    name = "signals_app"
    verbose_name = "Signals and acceptance"
    # Its consumers of the substrate's hooks (signals_app.receivers) are connected, in order,
    # by loopweb.pipeline.consumers.
