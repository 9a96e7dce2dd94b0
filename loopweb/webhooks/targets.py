"""Where a webhook may be sent: ``http(s)`` URLs, to public addresses and to the hosts and
networks a deployment lists in ``LOOPWEB_WEBHOOK_ALLOWED_HOSTS``; loopback, private, link-local
and other non-public addresses only when listed.

Pure apart from reading the setting: the sender resolves the name and asks ``Allowlist``
about every address before it connects, so a name that points somewhere forbidden is caught
at each delivery, not just when the URL is saved.
"""

import ipaddress
import re
import socket
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_PORT = r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
#: The whole rule for a URL, here and in the OpenAPI schema: http or https, a host name or an
#: IPv4 address, an optional port, then any printable ASCII without spaces.
URL_PATTERN = rf"^https?://{_LABEL}(?:\.{_LABEL})*\.?(?::{_PORT})?(?:[/?#][!-~]*)?$"
URL = re.compile(URL_PATTERN)
MAX_URL_LENGTH = 2000

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Allowlist:
    """Host names (exact, or a suffix when written with a leading dot), addresses and networks
    a deployment allows besides public addresses."""

    names: frozenset[str] = frozenset()
    networks: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> "Allowlist":
        names, networks = set(), []
        for entry in entries:
            entry = entry.strip().lower()
            if not entry:
                continue
            try:
                networks.append(ipaddress.ip_network(entry, strict=False))
            except ValueError:
                names.add(entry.rstrip("."))
        return cls(frozenset(names), tuple(networks))

    @classmethod
    def from_settings(cls) -> "Allowlist":
        value = getattr(settings, "LOOPWEB_WEBHOOK_ALLOWED_HOSTS", "")
        if isinstance(value, str):
            value = value.split(",")
        return cls.parse(value)

    def lists_name(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        return host in self.names or any(
            name.startswith(".") and host.endswith(name) for name in self.names
        )

    def allows_address(self, address: Address) -> bool:
        if getattr(address, "ipv4_mapped", None):
            address = address.ipv4_mapped
        if any(address in network for network in self.networks):
            return True
        return address.is_global and not address.is_multicast


def literal_address(host: str) -> Address | None:
    """The address a host written as one names, in every spelling a resolver reads as an IPv4
    address too (``2130706433``, ``0x7f000001``, ``017700000001``, ``127.1``: inet_aton's)."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    try:
        return ipaddress.IPv4Address(socket.inet_aton(host))
    except OSError:
        return None


def is_local_name(host: str) -> bool:
    host = host.lower().rstrip(".")
    return host == "localhost" or host.endswith(".localhost")


def url_problem(url: str, allowlist: Allowlist) -> tuple[str, str] | None:
    """Why a URL cannot be a webhook's target, as (code, message), or None."""
    if len(url) > MAX_URL_LENGTH or not URL.fullmatch(url):
        return (
            "invalid",
            "Enter an http:// or https:// URL with a host name or IPv4 address, and no spaces.",
        )
    host = host_of(url)
    if allowlist.lists_name(host):
        return None
    address = literal_address(host)
    if (address is not None and not allowlist.allows_address(address)) or (
        address is None and is_local_name(host)
    ):
        return (
            "host_not_allowed",
            f"{host} is a loopback or private address; this deployment does not allow it "
            "(LOOPWEB_WEBHOOK_ALLOWED_HOSTS).",
        )
    return None


def host_of(url: str) -> str:
    """The host of a URL that matched ``URL``."""
    rest = url.split("://", 1)[1]
    return re.split(r"[:/?#]", rest, maxsplit=1)[0].lower().rstrip(".")
