"""Outbound HTTP that cannot reach inside the network it runs in.

A channel's host is resolved once; every address it resolves to must be public (not
loopback, private, link-local, multicast, reserved or unspecified, IPv4-mapped IPv6
included) unless NOTIFICATIONS_ALLOWED_NETWORKS names its network. The connection then
goes to that checked address, with the Host header, TLS SNI and certificate check still
for the name: a second lookup (DNS rebinding) never happens. Redirects are not followed
and proxies are not used, so nothing but the checked address is reached.

Decimal and octal hosts (2852039166, 0177.0.0.1) are resolved like any name, by the C
library, into the address they really mean before the check.
"""

import ipaddress
import socket
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from requests.adapters import HTTPAdapter

SETTING = "NOTIFICATIONS_ALLOWED_NETWORKS"
DEFAULT_PORTS = {"http": 80, "https": 443}

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class OutboundRefused(Exception):
    """The address is inside (or does not resolve); nothing was sent. The text is for
    the operator: one line, no URL path."""


class OutboundUnresolved(OutboundRefused):
    """The host does not resolve (now: DNS may come back)."""


@lru_cache(maxsize=4)
def _networks(values: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    networks = []
    for value in values:
        try:
            networks.append(ipaddress.ip_network(value.strip(), strict=False))
        except ValueError as exc:
            raise ImproperlyConfigured(f"{SETTING}: {value!r} is not a network (CIDR)") from exc
    return tuple(networks)


def allowed_networks() -> tuple[IPNetwork, ...]:
    configured = settings.NOTIFICATIONS_ALLOWED_NETWORKS
    if isinstance(configured, str):
        configured = configured.split(",")
    return _networks(tuple(v.strip() for v in configured if v.strip()))


NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


def _embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, NAT64, 6to4), which it reaches."""
    if isinstance(address, ipaddress.IPv4Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address in NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return address.sixtofour


def address_kind(address: IPAddress) -> str | None:
    """What makes `address` internal ("loopback", ...), or None for a public one."""
    embedded = _embedded_ipv4(address)
    if embedded is not None:
        kind = address_kind(embedded)
        if kind is not None:
            return kind
    for kind in ("loopback", "unspecified", "link_local", "multicast", "private", "reserved"):
        if getattr(address, f"is_{kind}"):
            return kind.replace("_", "-")
    if not address.is_global:
        return "non-global"
    return None


def address_allowed(address: IPAddress) -> bool:
    embedded = _embedded_ipv4(address)
    if embedded is not None and any(embedded in n for n in allowed_networks()):
        return True
    return any(address in n for n in allowed_networks())


def host_addresses(*, host: str, port: int) -> list[IPAddress]:
    """Every address `host` resolves to, in the resolver's order, each once."""
    try:
        answers = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise OutboundUnresolved(f"{host} does not resolve") from exc
    found: list[IPAddress] = []
    for _family, _type, _proto, _name, sockaddr in answers:
        # A scoped IPv6 answer ("fe80::1%eth0") is link-local whatever its scope.
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in found:
            found.append(address)
    if not found:
        raise OutboundUnresolved(f"{host} does not resolve")
    return found


def host_check(*, host: str, port: int) -> IPAddress:
    """The address to connect to for `host`; OutboundRefused if any it resolves to is
    internal and not allowed by NOTIFICATIONS_ALLOWED_NETWORKS."""
    addresses = host_addresses(host=host, port=port)
    for address in addresses:
        kind = address_kind(address)
        if kind is not None and not address_allowed(address):
            shown = "" if host.strip("[]") == str(address) else f" resolves to {address}, which"
            raise OutboundRefused(
                f"{host}{shown} is a {kind} address: notifications only go to public "
                f"addresses unless {SETTING} allows its network"
            )
    return addresses[0]


def url_check(*, url: str) -> None:
    """Refuse (OutboundRefused) a URL whose host is internal. A name that does not resolve
    now passes: it is checked again, and refused then, at every send."""
    parts = urlsplit(url)
    if not parts.hostname:
        raise OutboundRefused("the URL has no host")
    try:
        host_check(host=parts.hostname, port=parts.port or DEFAULT_PORTS.get(parts.scheme, 80))
    except OutboundUnresolved:
        if not _literal(parts.hostname):
            return
        raise


def _literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class CheckedAddressAdapter(HTTPAdapter):
    """Connects to the address `host_check` approved, never to a second lookup's."""

    def send(self, request: requests.PreparedRequest, **kwargs: Any) -> requests.Response:
        parts = urlsplit(request.url)
        if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
            raise requests.exceptions.InvalidURL("only http:// and https:// URLs are sent")
        port = parts.port or DEFAULT_PORTS[parts.scheme]
        address = host_check(host=parts.hostname, port=port)
        shown = f"[{address}]" if address.version == 6 else str(address)
        netloc = parts.netloc.rsplit("@", 1)[-1]
        pinned = request.copy()
        pinned.url = urlunsplit((parts.scheme, f"{shown}:{port}", parts.path, parts.query, ""))
        pinned.headers["Host"] = netloc
        pinned._checked_hostname = parts.hostname  # type: ignore[attr-defined]
        # A proxy (HTTP(S)_PROXY) would make its own lookup, and reach anything.
        kwargs["proxies"] = {}
        return super().send(pinned, **kwargs)

    def build_connection_pool_key_attributes(self, request, verify, cert=None):
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(
            request, verify, cert
        )
        hostname = getattr(request, "_checked_hostname", None)
        if hostname and host_params["scheme"] == "https":
            # TLS speaks to, and verifies the certificate of, the name, not the address.
            pool_kwargs["server_hostname"] = hostname
            pool_kwargs["assert_hostname"] = hostname
        return host_params, pool_kwargs


def session_checked() -> requests.Session:
    session = requests.Session()
    adapter = CheckedAddressAdapter(max_retries=0)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
