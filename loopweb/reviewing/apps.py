from django.apps import AppConfig


class ReviewingConfig(AppConfig):
    name = "loopweb.reviewing"
    label = "reviewing"
    verbose_name = "Reviewing"
    # Its consumers of the substrate's hooks (loopweb.reviewing.receivers) are connected, in
    # order, by loopweb.pipeline.consumers.
