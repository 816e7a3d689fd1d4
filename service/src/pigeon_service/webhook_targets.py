"""Where a webhook may be sent: the URL check at creation, and the one address a delivery connects to.

A name is resolved once per attempt; every address it resolves to is checked, and the request is then sent to
the checked address itself (the URL's host goes in the ``Host`` header and, for HTTPS, in the TLS server name, so
certificates are still verified against the name). There is no second look-up between the check and the
connection for a rebinding DNS server to answer differently.

A service that listens on loopback only may let webhooks reach loopback too (its callers are on this machine
already); private, link-local and metadata addresses stay refused.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from dataclasses import dataclass, field
from urllib.parse import urlsplit

RESOLVE_TIMEOUT = 3.0

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class UnsafeWebhookURL(ValueError):
    """A webhook URL that points at this machine, a private network or a cloud metadata service."""


def is_loopback_host(host: str) -> bool:
    """Whether a service listening on ``host`` is reachable from this machine only."""
    literal = _literal(host.strip("[]"))
    return host == "localhost" or (literal is not None and _unmapped(literal).is_loopback)


def _unmapped(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _blocked(address: Address, *, allow_loopback: bool) -> bool:
    address = _unmapped(address)
    if allow_loopback and address.is_loopback:
        return False
    # Not globally routable covers loopback, private, link-local (cloud metadata at 169.254.169.254), carrier-grade
    # NAT, documentation, reserved and unspecified ranges; multicast is refused too.
    return not address.is_global or address.is_multicast


def _host_of(url: str, *, allow_loopback: bool) -> str:
    host = (urlsplit(url).hostname or "").rstrip(".").lower()
    if not host:
        raise UnsafeWebhookURL("the URL has no host")
    if host == "localhost" and allow_loopback:
        return host  # its addresses are still checked: loopback only
    if host == "localhost" or host.endswith((".localhost", ".internal", ".local")):
        raise UnsafeWebhookURL(f"{host} is a local name; webhooks may not target this machine or its network")
    return host


def _literal(host: str) -> Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


async def _resolve(host: str) -> list[Address]:
    async with asyncio.timeout(RESOLVE_TIMEOUT):
        infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


async def _safe_addresses(host: str, *, allow_loopback: bool) -> list[Address]:
    literal = _literal(host)
    addresses = [literal] if literal is not None else await _resolve(host)
    for address in addresses:
        if _blocked(address, allow_loopback=allow_loopback):
            if literal is not None:
                raise UnsafeWebhookURL(f"{host} is a loopback, private, link-local or reserved address")
            raise UnsafeWebhookURL(f"{host} resolves to {address}, a loopback, private or reserved address")
    if not addresses:
        raise UnsafeWebhookURL(f"{host} resolves to no address")
    return addresses


async def check_url(url: str, *, allow_private: bool, allow_loopback: bool = False) -> None:
    """At creation: refuse ``url`` if its host is, or resolves to, an address a webhook must not reach.

    A name that does not resolve yet is let through; it must resolve, to safe addresses, at every delivery.
    """
    if allow_private:
        return
    host = _host_of(url, allow_loopback=allow_loopback)
    try:
        await _safe_addresses(host, allow_loopback=allow_loopback)
    except (OSError, TimeoutError):
        return


@dataclass(frozen=True)
class Target:
    """What one attempt sends to: the URL to connect to, and what keeps the name for the receiver and TLS."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    extensions: dict[str, str] = field(default_factory=dict)


async def pinned_target(url: str, *, allow_private: bool, allow_loopback: bool = False) -> Target:
    """Resolve ``url``'s host once, check every address, and point the request at the first one."""
    if allow_private:
        return Target(url)
    host = _host_of(url, allow_loopback=allow_loopback)
    try:
        addresses = await _safe_addresses(host, allow_loopback=allow_loopback)
    except (OSError, TimeoutError) as exc:
        raise UnsafeWebhookURL(f"{host} could not be resolved") from exc
    import httpx  # (here: the service starts without it)

    parsed = httpx.URL(url)
    if _literal(host) is not None:
        return Target(url)
    address = addresses[0]
    pinned = parsed.copy_with(host=str(address))
    extensions = {"sni_hostname": host} if parsed.scheme == "https" else {}
    return Target(str(pinned), {"host": parsed.netloc.decode("ascii")}, extensions)
