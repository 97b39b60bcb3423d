"""Run a precision config through the real nginx and the engine; compare with its expected file."""

from __future__ import annotations

import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass, field, replace
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from nginx_fleet_analyzer import parse_dump, parse_path
from nginx_fleet_analyzer.engine import Report, analyze
from nginx_fleet_analyzer.facts import HostFacts, parse_version

CONFIGS = Path(__file__).parent / "configs"
NGINX = shutil.which("nginx") or "/usr/sbin/nginx"
OPENSSL = shutil.which("openssl") or "/usr/bin/openssl"
# Debian ships each dynamic module in its own package; the skip reason names it.
MODULE_PACKAGES = {
    "ngx_http_headers_more_filter_module.so": "libnginx-mod-http-headers-more-filter",
    "ngx_stream_module.so": "libnginx-mod-stream",
    "ngx_mail_module.so": "libnginx-mod-mail",
    "ngx_http_geoip_module.so": "libnginx-mod-http-geoip",
    "ngx_http_image_filter_module.so": "libnginx-mod-http-image-filter",
    "ngx_http_xslt_filter_module.so": "libnginx-mod-http-xslt-filter",
    "ngx_http_echo_module.so": "libnginx-mod-http-echo",
    "ndk_http_module.so": "libnginx-mod-http-ndk",
    "ngx_http_lua_module.so": "libnginx-mod-http-lua",
}
_LOAD_MODULE = re.compile(r"^\s*load_module\s+(\S+?);", re.MULTILINE)
# Data files a module reads at start-up, and the Debian package that ships them.
_DATA_FILE = re.compile(r"^\s*geoip_(?:country|city|org)\s+(\S+?);", re.MULTILINE)
DATA_PACKAGE = "geoip-database"
# Findings at these levels are compared exactly; infos only when an entry names them.
COMPARED = frozenset({"error", "warning"})


@dataclass(slots=True, frozen=True)
class Expectation:
    """One finding an expert expects: rule, severity, optional place, how many, and why."""

    rule: str
    severity: str
    why: str
    file: str | None = None
    line: int | None = None
    count: int = 1
    # A judgment call: the finding may appear (up to `count` times) or not.
    optional: bool = False

    def matches(self, finding: dict[str, object]) -> bool:
        """Whether `finding` (relative file) is one this entry stands for."""
        return (
            finding["rule"] == self.rule
            and finding["severity"] == self.severity
            and (self.file is None or finding["file"] == self.file)
            and (self.line is None or finding["line"] == self.line)
        )

    def label(self) -> str:
        """Short form for messages."""
        place = f" at {self.file}:{self.line or '*'}" if self.file else ""
        return f"{self.rule}/{self.severity}{place} x{self.count}"


@dataclass(slots=True, frozen=True)
class Case:
    """A config tree and what is true about it."""

    name: str
    root: Path
    accepted: bool
    real_problem: bool
    site_file: str
    expected: list[Expectation] = field(default_factory=list)
    allowed_info: frozenset[str] = frozenset()
    # Host facts as the agent sends them, and what is expected once they are known.
    facts: dict[str, object] | None = None
    expected_with_facts: list[Expectation] = field(default_factory=list)

    def with_facts(self) -> Case:
        """The same config judged against its expectations with host facts."""
        return replace(self, expected=self.expected_with_facts)


def load_case(root: Path) -> Case:
    """Read `expected.toml` of one config directory."""
    data = tomllib.loads((root / "expected.toml").read_text())
    with_facts = data.get("with_facts", {})
    return Case(
        name=root.name,
        root=root,
        accepted=data.get("accepted", True),
        real_problem=data.get("real_problem", False),
        site_file=data["site_file"],
        expected=_expectations(data),
        allowed_info=frozenset(data.get("allowed_info", [])),
        facts=with_facts.get("facts"),
        expected_with_facts=_expectations(with_facts),
    )


def _expectations(table: dict[str, Any]) -> list[Expectation]:
    """The `expect` (required) and `allow` (judgment call) entries of a table."""
    return [
        Expectation(
            rule=item["rule"],
            severity=item["severity"],
            why=item["why"],
            file=item.get("file"),
            line=item.get("line"),
            count=item.get("count", 1),
            optional=optional,
        )
        for key, optional in (("expect", False), ("allow", True))
        for item in table.get(key, [])
    ]


def all_cases() -> list[Case]:
    """Every config directory, sorted by name."""
    return [load_case(p) for p in sorted(CONFIGS.iterdir()) if (p / "expected.toml").is_file()]


def missing_modules(root: Path) -> list[str]:
    """apt packages of `load_module` targets and module data files the host lacks."""
    missing = []
    for conf in root.rglob("*"):
        if not conf.is_file() or conf.name == "expected.toml":
            continue
        text = conf.read_text(errors="replace")
        for target in _LOAD_MODULE.findall(text):
            if not Path(target).is_file():
                missing.append(MODULE_PACKAGES.get(Path(target).name, Path(target).name))
        if any(not Path(data).is_file() for data in _DATA_FILE.findall(text)):
            missing.append(DATA_PACKAGE)
    return sorted(set(missing))


@cache
def _certificate(workdir: Path) -> tuple[bytes, bytes]:
    """One self-signed EC certificate and key, shared by every config (fast to make)."""
    workdir.mkdir(parents=True, exist_ok=True)
    crt, key = workdir / "site.crt", workdir / "site.key"
    subprocess.run(
        [OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-days", "30", "-subj", "/CN=example.test",
         "-keyout", str(key), "-out", str(crt)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return crt.read_bytes(), key.read_bytes()


def install(case: Case, prefix: Path, certdir: Path) -> Path:
    """Copy the tree to `prefix` with what nginx needs at run time (certs, logs); the main file."""
    shutil.copytree(case.root, prefix, ignore=shutil.ignore_patterns("expected.toml"))
    crt, key = _certificate(certdir)
    (prefix / "certs").mkdir(exist_ok=True)
    (prefix / "certs" / "site.crt").write_bytes(crt)
    (prefix / "certs" / "site.key").write_bytes(key)
    # Runtime directories a package creates under /var (logs, cache parents), here in the prefix.
    (prefix / "logs").mkdir(exist_ok=True)
    (prefix / "cache").mkdir(exist_ok=True)
    return prefix / "nginx.conf"


def nginx(prefix: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    """The real nginx with the tree as prefix and its nginx.conf as the main file."""
    return subprocess.run(
        [NGINX, *flags, "-p", f"{prefix}/", "-c", str(prefix / "nginx.conf")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


@cache
def nginx_version() -> tuple[int, int, int] | None:
    """The version of the nginx under test (what the agent would report); None without nginx."""
    if not Path(NGINX).is_file():
        return None
    run = subprocess.run([NGINX, "-v"], capture_output=True, text=True, check=False)
    return parse_version(run.stderr)


@cache
def nginx_build() -> dict[str, object]:
    """What the agent reports about the nginx under test: version and configure arguments."""
    run = subprocess.run([NGINX, "-V"], capture_output=True, text=True, check=False)
    facts: dict[str, object] = {}
    for line in run.stderr.splitlines():
        if line.startswith("nginx version:"):
            facts["nginx_version"] = line.partition(":")[2].strip()
        elif line.startswith("configure arguments:"):
            facts["nginx_configure_args"] = line.partition(":")[2].strip()
    return facts


def analyse_dump(dump: str, facts: dict[str, object] | None = None) -> Report:
    """The engine on the real dump: with the nginx version only, or the build and `facts`."""
    if facts is None:
        return analyze(parse_dump(dump), HostFacts(nginx_version=nginx_version()))
    host = HostFacts.from_dict({**nginx_build(), **facts})
    return analyze(parse_dump(dump), host)


def analyse_files(main: Path) -> Report:
    """The engine on the files on disk (for configs nginx rejects, which have no dump)."""
    return analyze(parse_path(main), HostFacts(nginx_version=nginx_version()))


def relative(report: Report, prefix: Path) -> list[dict[str, object]]:
    """Findings as dicts with file names relative to the prefix."""
    head = f"{prefix}/"
    out = []
    for finding in report.findings:
        item = finding.to_dict()
        name = str(item["file"])
        item["file"] = name[len(head) :] if name.startswith(head) else name
        out.append(item)
    return out


def compare(case: Case, findings: list[dict[str, object]]) -> list[str]:
    """What differs between the expected and the actual errors and warnings (empty: agree)."""
    problems = []
    claimed: set[int] = set()
    for entry in case.expected:
        hits = [i for i, f in enumerate(findings) if entry.matches(f)]
        claimed.update(hits)
        if len(hits) > entry.count or (len(hits) < entry.count and not entry.optional):
            problems.append(f"expected {entry.label()}, got {len(hits)} ({entry.why})")
    for index, finding in enumerate(findings):
        if finding["severity"] in COMPARED and index not in claimed:
            problems.append(
                f"unexpected {finding['rule']}/{finding['severity']} at "
                f"{finding['file']}:{finding['line']}: {finding['message']}"
            )
    return problems


def skip_without_nginx_or_modules(case: Case) -> None:
    """Skip a test of `case` with the apt-get command to run when nginx or a module is missing."""
    if not Path(NGINX).is_file():
        pytest.skip("nginx missing: apt-get install nginx")
    missing = missing_modules(case.root)
    if missing:
        pytest.skip(f"module package missing: apt-get install {' '.join(missing)}")
