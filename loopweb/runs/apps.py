from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_save


def ensure_account(sender, instance, created, **kwargs):
    if created:
        from loopweb.runs.models import Account

        Account.objects.get_or_create(user=instance)


class RunsConfig(AppConfig):
    name = "loopweb.runs"
    label = "runs"
    verbose_name = "Runs and catalog"

    def ready(self):
        post_save.connect(ensure_account, sender=settings.AUTH_USER_MODEL, dispatch_uid="account")
        from loopweb.runs import auth  # noqa: F401  (registers the OpenAPI auth scheme)
