from rest_framework.permissions import SAFE_METHODS, BasePermission

from loopweb.runs.access import role_of
from loopweb.runs.models import Role


class CatalogWrite(BasePermission):
    """Everyone signed in reads the catalog; owners and staff write it."""

    def has_permission(self, request, view):
        if not request.user.is_authenticated:
            return False
        if request.method in SAFE_METHODS:
            return True
        return request.user.is_staff or role_of(request.user) == Role.OWNER


class IsOwner(BasePermission):
    def has_permission(self, request, view):
        return request.user.is_authenticated and (
            request.user.is_staff or role_of(request.user) == Role.OWNER
        )


class IsDriver(BasePermission):
    def has_permission(self, request, view):
        return request.user.is_authenticated and role_of(request.user) == Role.DRIVER


class CanPush(BasePermission):
    """Drivers push runs; owners may push runs they launched outside Loopweb."""

    def has_permission(self, request, view):
        return request.user.is_authenticated and (
            request.user.is_staff or role_of(request.user) in (Role.DRIVER, Role.OWNER)
        )


class CanReview(BasePermission):
    def has_permission(self, request, view):
        return request.user.is_authenticated and (
            request.user.is_staff or role_of(request.user) in (Role.OWNER, Role.REVIEWER)
        )
