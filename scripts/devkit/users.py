"""Users in the role groups (viewer, operator, approver, admin; a plans migration makes them)."""

from django.contrib.auth.models import Group, User


def user_make(name: str, *groups: str, password: str = "") -> User:
    user = User.objects.create_user(name, password=password or None)
    for group in groups:
        user.groups.add(Group.objects.get(name=group))
    return user
