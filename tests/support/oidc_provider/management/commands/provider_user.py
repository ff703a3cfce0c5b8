"""`provider_user`: the provider's user (password, groups) and the product's client,
created or updated; groups given replace the user's."""

from django.contrib.auth.models import Group, User
from django.core.management.base import BaseCommand, CommandParser
from oidc_provider.models import Client, ResponseType


class Command(BaseCommand):
    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--username", required=True)
        parser.add_argument("--password", required=True)
        parser.add_argument("--groups", default="", help="comma-separated")
        parser.add_argument("--client-id")
        parser.add_argument("--client-secret")
        parser.add_argument("--redirect-uri")

    def handle(self, *args, **opts) -> None:
        user, _ = User.objects.get_or_create(
            username=opts["username"], defaults={"email": f"{opts['username']}@example.test"}
        )
        user.set_password(opts["password"])
        user.save()
        names = [g for g in opts["groups"].split(",") if g]
        user.groups.set([Group.objects.get_or_create(name=n)[0] for n in names])
        if opts["client_id"]:
            client, _ = Client.objects.update_or_create(
                client_id=opts["client_id"],
                defaults={
                    "name": "Kafka Balancer",
                    "client_type": "confidential",
                    "client_secret": opts["client_secret"],
                    "jwt_alg": "RS256",
                    "require_consent": False,
                    "_redirect_uris": opts["redirect_uri"],
                    "_scope": "openid email profile groups",
                },
            )
            client.response_types.set([ResponseType.objects.get(value="code")])
