"""The demo nginx instances: their templates, prefixes and command lines."""

from __future__ import annotations

import re
import shutil
import socket
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from tls_cert import write_self_signed

DEMO_DIR = Path(__file__).resolve().parent
TEMPLATES_DIR = DEMO_DIR / "nginx"
SITE_DIR = DEMO_DIR / "site"
DEFAULT_NGINX = "/usr/sbin/nginx"
INSTALL_HINT = (
    "nginx was not found, so the demo starts the dashboard without demo hosts.\n"
    "Install it with:  sudo apt-get install nginx   (or pass --nginx /path/to/nginx)"
)
PLACEHOLDER = re.compile(r"@[A-Z_]+@")
TEMP_SUBDIRS = ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
# The file the drops profile downloads slowly (limit_rate 16k: about three seconds).
SLOW_DOWNLOAD = "downloads/demo.bin"
SLOW_DOWNLOAD_BYTES = 48 * 1024
# Days a TLS instance's certificate is valid from its start: soon enough for the expiry alert.
CERTIFICATE_DAYS = 10


@dataclass(frozen=True)
class InstanceSpec:
    """What differs between the demo instances."""

    name: str
    role: str
    traffic_profile: str
    needs_upstream: bool
    # Also serves TLS on a second port, with a certificate made at start.
    needs_tls: bool = False
    # Serves SLOW_DOWNLOAD, which its template rate-limits.
    slow_download: bool = False


INSTANCES = (
    InstanceSpec(
        "demo-default", role="static-default", traffic_profile="static", needs_upstream=False
    ),
    InstanceSpec("demo-tuned", role="static-tuned", traffic_profile="static", needs_upstream=False),
    InstanceSpec("demo-cache", role="cache", traffic_profile="cache", needs_upstream=True),
    InstanceSpec(
        "demo-drops",
        role="edge",
        traffic_profile="drops",
        needs_upstream=False,
        needs_tls=True,
        slow_download=True,
    ),
)


@dataclass(frozen=True)
class NginxInstance:
    """A rendered instance: where it lives and where it listens."""

    spec: InstanceSpec
    prefix: Path
    port: int
    tls_port: int | None = None

    @property
    def base_url(self) -> str:
        """The loopback URL of its server."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def status_url(self) -> str:
        """Its stub_status URL."""
        return f"{self.base_url}/nginx_status"

    def nginx_args(self) -> list[str]:
        """Arguments that select this instance's prefix, config and early error log."""
        return ["-p", f"{self.prefix}/", "-c", "conf/nginx.conf", "-e", "logs/error.log"]


def find_nginx(requested: str | None) -> str | None:
    """The nginx binary to use: the one asked for, else /usr/sbin/nginx, else one on PATH."""
    if requested:
        return requested if Path(requested).is_file() else None
    if Path(DEFAULT_NGINX).is_file():
        return DEFAULT_NGINX
    return shutil.which("nginx")


def free_port() -> int:
    """A loopback TCP port that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def render_instance(
    spec: InstanceSpec,
    root: Path,
    *,
    port: int,
    upstream_port: int | None,
    tls_port: int | None = None,
) -> NginxInstance:
    """Create ROOT/NAME: conf/ (rendered from the template), html/, logs/, temp/, cache/.

    A TLS instance gets conf/tls/NAME.crt and .key, made now, and a free TLS port unless one
    is given."""
    prefix = root / spec.name
    for sub in ("conf", "logs", "cache", *(f"temp/{name}" for name in TEMP_SUBDIRS)):
        (prefix / sub).mkdir(parents=True, exist_ok=True)
    if (prefix / "html").exists():
        shutil.rmtree(prefix / "html")
    shutil.copytree(SITE_DIR, prefix / "html")
    if spec.slow_download:
        slow_file = prefix / "html" / SLOW_DOWNLOAD
        slow_file.parent.mkdir(parents=True, exist_ok=True)
        slow_file.write_bytes(bytes(SLOW_DOWNLOAD_BYTES))
    shutil.copy(TEMPLATES_DIR / "mime.types", prefix / "conf" / "mime.types")
    template = (TEMPLATES_DIR / spec.name / "nginx.conf").read_text()
    values = {"@PREFIX@": str(prefix), "@LISTEN_PORT@": str(port)}
    if spec.needs_upstream:
        if upstream_port is None:
            raise ValueError(f"{spec.name} proxies to the demo app: an upstream port is needed")
        values["@UPSTREAM_PORT@"] = str(upstream_port)
    if spec.needs_tls:
        tls_port = tls_port or free_port()
        values["@TLS_PORT@"] = str(tls_port)
    else:
        tls_port = None
    for placeholder, value in values.items():
        template = template.replace(placeholder, value)
    unfilled = PLACEHOLDER.search(template)
    if unfilled:
        raise ValueError(
            f"{spec.name}: the template uses {unfilled[0]}, which the demo does not fill"
        )
    (prefix / "conf" / "nginx.conf").write_text(template)
    # When the demo runs as root, nginx workers run as nobody and must be able to read the site.
    for path in (root, prefix, *prefix.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
    if spec.needs_tls:
        # After the chmod above: the key stays readable by its owner only (the nginx master).
        write_self_signed(
            prefix / "conf" / "tls",
            spec.name,
            days=CERTIFICATE_DAYS,
            dns_names=[f"{spec.name}.test", "localhost"],
        )
    return NginxInstance(spec=spec, prefix=prefix, port=port, tls_port=tls_port)


def wait_until_serving(instance: NginxInstance, timeout_s: float = 15.0) -> None:
    """Wait until the instance's stub_status answers 200; raise with the error log otherwise."""
    deadline = time.monotonic() + timeout_s
    last_error = "no answer yet"
    while time.monotonic() < deadline:
        try:
            response = httpx.get(instance.status_url, timeout=1.0)
            if response.status_code == 200:
                return
            last_error = f"HTTP {response.status_code}"
        except httpx.HTTPError as error:
            last_error = str(error)
        time.sleep(0.2)
    error_log = instance.prefix / "logs" / "error.log"
    tail = error_log.read_text()[-2000:] if error_log.exists() else "(no error log)"
    raise RuntimeError(f"{instance.spec.name} did not start ({last_error}); error log:\n{tail}")
