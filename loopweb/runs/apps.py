from django.apps import AppConfig
from django.conf import settings
from django.db.models.signals import post_delete, post_save


def ensure_account(sender, instance, created, **kwargs):
    if created:
        from loopweb.runs.models import Account

        Account.objects.get_or_create(user=instance)


def catalog_changed(sender, **kwargs):
    from loopweb.runs import changes

    changes.touch([changes.CATALOG])


class RunsConfig(AppConfig):
    name = "loopweb.runs"
    label = "runs"
    verbose_name = "Runs and catalog"

    def ready(self):
        post_save.connect(ensure_account, sender=settings.AUTH_USER_MODEL, dispatch_uid="account")
        from loopweb.runs.models import Case, CaseVersion, Combination, GGConfiguration, ModelEntry

        # Labels, launchability and stale rungs are read from the catalog.
        for model in (Case, CaseVersion, ModelEntry, GGConfiguration, Combination):
            for hook in (post_save, post_delete):
                hook.connect(catalog_changed, sender=model, dispatch_uid="changes")
        from loopweb.runs import auth  # noqa: F401  (registers the OpenAPI auth scheme)
