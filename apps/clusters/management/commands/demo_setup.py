import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandParser

from apps.clusters.services import cluster_register


class Command(BaseCommand):
    help = "Register the default cluster and make sure an admin user exists (prints its login)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", default=settings.BALANCER_ADMIN_USER)
        parser.add_argument(
            "--credentials-file",
            default=str(settings.BASE_DIR / ".run" / "admin-credentials.txt"),
            help="where a generated password is kept (git-ignored)",
        )

    def handle(self, *args, **options) -> None:
        cluster = cluster_register(
            name=settings.KAFKA_DEFAULT_CLUSTER_NAME,
            bootstrap_servers=settings.KAFKA_BOOTSTRAP_SERVERS,
        )
        self.stdout.write(f"cluster {cluster.name}: {cluster.bootstrap_servers}")

        username = options["username"]
        path = Path(options["credentials_file"])
        user_model = get_user_model()
        user = user_model.objects.filter(username=username).first()
        password = settings.BALANCER_ADMIN_PASSWORD
        if user is None or password or not path.exists():
            # A fresh password only when we cannot show the current one.
            password = password or secrets.token_urlsafe(12)
            user = user or user_model(username=username)
            user.is_staff = user.is_superuser = True
            user.set_password(password)
            user.save()
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{username} {password}\n")
            path.chmod(0o600)
        username, password = path.read_text().split()
        self.stdout.write(f"admin login: {username} / {password}")
