"""Which addresses count as inside: every IPv4 and IPv6 kind that is not public, the
IPv6 forms that carry an internal IPv4 address included; the allow-list lets one through."""

from ipaddress import ip_address

import pytest

from apps.notifications.outbound import OutboundRefused, address_kind, host_check

INSIDE = {
    "127.0.0.1": "loopback",
    "::1": "loopback",
    "::ffff:127.0.0.1": "loopback",
    "64:ff9b::7f00:1": "loopback",  # NAT64
    "2002:7f00:1::1": "loopback",  # 6to4
    "169.254.169.254": "link-local",
    "fe80::1": "link-local",
    "10.1.2.3": "private",
    "172.16.0.1": "private",
    "192.168.0.1": "private",
    "fd00::1": "private",
    "100.64.1.1": "non-global",  # carrier-grade NAT
    "224.0.0.1": "multicast",
    "ff02::1": "multicast",
    "0.0.0.0": "unspecified",
    "::": "unspecified",
}


@pytest.mark.parametrize("address", INSIDE)
def test_it_names_what_makes_an_address_internal(address):
    assert address_kind(ip_address(address)) == INSIDE[address]


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700::1111", "2002:808:808::1"])
def test_it_finds_nothing_internal_in_a_public_address(address):
    assert address_kind(ip_address(address)) is None


def test_it_lets_through_only_what_the_allow_list_names(settings):
    settings.NOTIFICATIONS_ALLOWED_NETWORKS = ["10.20.0.0/16"]
    assert str(host_check(host="10.20.3.4", port=443)) == "10.20.3.4"
    with pytest.raises(OutboundRefused, match="private"):
        host_check(host="10.21.3.4", port=443)
