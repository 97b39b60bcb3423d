"""nginx stub_status: parse the status page and discover its URL from the `nginx -T` tree."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any

import httpx

from nginx_fleet_agent import defaults
from nginx_fleet_agent.nginx_syntax import Directive, walk

_PAGE = re.compile(
    r"\AActive connections:\s*(?P<active>\d+)\s*\n"
    r"server accepts handled requests\s*\n"
    r"\s*(?P<accepts>\d+)\s+(?P<handled>\d+)\s+(?P<requests>\d+)\s*\n"
    r"Reading:\s*(?P<reading>\d+)\s+Writing:\s*(?P<writing>\d+)\s+Waiting:\s*(?P<waiting>\d+)\s*\Z"
)
_FIELDS = ("active", "reading", "writing", "waiting", "accepts", "handled", "requests")
NO_LOCATION_ERROR = "no stub_status location found in the nginx -T output"


class StubStatusParseError(ValueError):
    """The page is not a stub_status page."""


@dataclass(frozen=True)
class StubStatusTarget:
    """Where to fetch the page: a URL and the Host header its server block answers to.

    `url` never holds credentials (it is sent in every sample); a configured URL's
    `user:pass@` is moved to `auth` and used only for the request itself."""

    url: str
    host_header: str | None = None
    auth: tuple[str, str] | None = field(default=None, repr=False)


def configured_target(url: str) -> StubStatusTarget:
    """The target of a configured URL, its userinfo split off into basic-auth credentials."""
    parsed = httpx.URL(url)
    if not parsed.userinfo:
        return StubStatusTarget(url)
    clean = str(parsed.copy_with(username=None, password=None))
    return StubStatusTarget(clean, auth=(parsed.username, parsed.password))


def parse_stub_status(text: str) -> dict[str, int]:
    """Parse the exact text of a stub_status page into its seven integers."""
    match = _PAGE.match(text)
    if match is None:
        raise StubStatusParseError("response is not a stub_status page")
    return {name: int(match.group(name)) for name in _FIELDS}


def discover_target(tree: list[Directive]) -> StubStatusTarget | None:
    """The first stub_status location whose server listens on a loopback or wildcard address."""
    for http in (d for d in tree if d.name == "http" and d.block is not None):
        for server in (d for d in http.block or [] if d.name == "server" and d.block):
            path = _stub_status_path(server.block or [])
            if path is None:
                continue
            base = _local_base_url(server.block or [])
            if base is not None:
                return StubStatusTarget(base + path, _plain_server_name(server.block or []))
    return None


def _stub_status_path(server_block: list[Directive]) -> str | None:
    for location in (d for d in walk(server_block) if d.name == "location" and d.block):
        if not any(child.name == "stub_status" for child in location.block or []):
            continue
        args = [token.text for token in location.args]
        if len(args) == 2 and args[0] in {"=", "^~"}:
            return args[1]
        if len(args) == 1 and args[0].startswith("/"):
            return args[0]
    return None


def _local_base_url(server_block: list[Directive]) -> str | None:
    listens = [[t.text for t in d.args] for d in server_block if d.name == "listen" and d.args]
    if not listens:
        # A server without `listen` takes *:80 (nginx runs as root) - the common case.
        listens = [["80"]]
    candidates = [base for base in map(_base_url_of_listen, listens) if base is not None]
    # Prefer plain HTTP: a loopback TLS port would need certificate checks switched off.
    candidates.sort(key=lambda base: base.startswith("https"))
    return candidates[0] if candidates else None


def _base_url_of_listen(args: list[str]) -> str | None:
    address, params = args[0], args[1:]
    if address.startswith("unix:"):
        return None
    host, port = _split_address(address)
    if port is None:
        return None
    local_host = _local_host(host)
    if local_host is None:
        return None
    scheme = "https" if "ssl" in params else "http"
    return f"{scheme}://{local_host}:{port}"


def _split_address(address: str) -> tuple[str, int | None]:
    if address.startswith("["):
        host, _, rest = address[1:].partition("]")
        port_text = rest.removeprefix(":") or "80"
        host = f"[{host}]"
    elif address.isdigit():
        host, port_text = "*", address
    elif ":" in address:
        host, _, port_text = address.rpartition(":")
    else:
        host, port_text = address, "80"
    return host, int(port_text) if port_text.isdigit() else None


def _local_host(host: str) -> str | None:
    """The address to connect to for a listen host, or None when it is not local."""
    if host in {"*", "0.0.0.0", "localhost"}:  # noqa: S104 - a listen address we read
        return "127.0.0.1"
    if host in {"[::]", "[::1]"}:
        return "[::1]"
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return None
    return host if address.is_loopback else None


def _plain_server_name(server_block: list[Directive]) -> str | None:
    for directive in (d for d in server_block if d.name == "server_name"):
        for token in directive.args:
            name = token.text
            if name and name != "_" and not any(c in name for c in "*~$"):
                return name
    return None


class StubStatusCollector:
    """Fetches and parses the stub_status page."""

    def __init__(
        self, configured_url: str | None, timeout_s: float = defaults.STUB_STATUS_TIMEOUT_S
    ) -> None:
        self._configured = configured_target(configured_url) if configured_url else None
        self._discovered: StubStatusTarget | None = None
        # trust_env=False: a proxy from the environment must never see loopback requests.
        # verify=False: a discovered TLS port on loopback serves the host's own certificate,
        # usually not valid for 127.0.0.1; nothing leaves the machine.
        self._client = httpx.Client(timeout=timeout_s, trust_env=False, verify=False)  # noqa: S501

    def use_config(self, tree: list[Directive]) -> None:
        """Re-discover the URL from a freshly read configuration."""
        self._discovered = discover_target(tree)

    @property
    def target(self) -> StubStatusTarget | None:
        """The configured target, else the discovered one."""
        return self._configured or self._discovered

    def collect(self) -> dict[str, Any]:
        """Fetch the page; report `available: false` with the reason when it cannot be read."""
        target = self.target
        if target is None:
            return {"stub_status": {"available": False, "url": None, "error": NO_LOCATION_ERROR}}
        headers = {"Host": target.host_header} if target.host_header else {}
        try:
            response = self._client.get(target.url, headers=headers, auth=target.auth)
        except httpx.HTTPError as exc:
            return _unavailable(target.url, _describe_http_error(exc))
        if response.status_code != 200:
            return _unavailable(target.url, f"HTTP {response.status_code}")
        try:
            counters = parse_stub_status(response.text)
        except StubStatusParseError as exc:
            return _unavailable(target.url, str(exc))
        return {"stub_status": {"available": True, "url": target.url, "error": None, **counters}}

    def close(self) -> None:
        """Release the HTTP connection pool."""
        self._client.close()


def not_running() -> dict[str, Any]:
    """The fragment sent when nginx itself is down."""
    return {"stub_status": {"available": False, "url": None, "error": "nginx is not running"}}


def _unavailable(url: str, error: str) -> dict[str, Any]:
    return {"stub_status": {"available": False, "url": url, "error": error}}


def _describe_http_error(exc: httpx.HTTPError) -> str:
    if isinstance(exc, httpx.ConnectError):
        text = str(exc).lower()
        return "connection refused" if "refused" in text else f"cannot connect: {exc}"
    if isinstance(exc, httpx.TimeoutException):
        return "timed out"
    return f"request failed: {exc}"
