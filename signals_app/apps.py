from django.apps import AppConfig


class SignalsAppConfig(AppConfig):
    name = "signals_app"
    verbose_name = "Signals and acceptance"
