from django.apps import AppConfig


class ConsoleConfig(AppConfig):
    name = "loopweb.console"
    label = "console"
    verbose_name = "Console"
