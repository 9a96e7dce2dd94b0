from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from loopweb.runs.models import Account, ApiToken, Role


class Command(BaseCommand):
    help = "Create a user with a role and print a new API token as the last line."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--password", required=True)
        parser.add_argument("--role", choices=Role.values, default=Role.OWNER)
        parser.add_argument("--staff", action="store_true", help="also let them use the admin")

    def handle(self, username, password, role, staff, **options):
        User = get_user_model()
        with transaction.atomic():
            if User.objects.filter(username=username).exists():
                raise CommandError(f"user {username!r} already exists")
            user = User.objects.create_user(
                username=username, password=password, is_staff=staff, is_superuser=staff
            )
            Account.objects.update_or_create(user=user, defaults={"role": role})
            _, raw = ApiToken.objects.issue(user, name="create_user")
        self.stdout.write(f"created {role} {username}")
        self.stdout.write(raw)
