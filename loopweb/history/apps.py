from django.apps import AppConfig


class HistoryConfig(AppConfig):
    name = "loopweb.history"
    label = "history"
    verbose_name = "History"
    # Its consumers of the ladder engine's hooks (loopweb.history.receivers) are connected, in
    # order, by loopweb.pipeline.consumers.
