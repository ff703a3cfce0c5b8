"""What the test provider says of its users: name and email, and their groups (scope
"groups", claim "groups") from the provider's own Django groups."""

from oidc_provider.lib.claims import ScopeClaims


def userinfo(claims: dict, user) -> dict:
    claims["preferred_username"] = user.username
    claims["email"] = user.email
    return claims


class GroupsScopeClaims(ScopeClaims):
    info_groups = ("Groups", "The groups you are in.")

    def scope_groups(self) -> dict:
        return {"groups": sorted(self.user.groups.values_list("name", flat=True))}
