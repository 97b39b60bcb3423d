"""Which certificate files a config's `ssl_certificate` directives name (http, stream, mail).

nginx facts this follows (src/event/ngx_event_openssl.c, ngx_http_ssl_module.c, 1.22):
- A relative path is relative to the directory of the main config file (`conf_prefix`), not
  to the prefix: ngx_ssl_load_certificate resolves it with ngx_get_full_name(conf_prefix).
- A value starting with `data:` holds the PEM text itself instead of naming a file.
- A value holding variables is loaded per handshake (since 1.15.9): no single file to read.
- Only the certificate directive is listed here; `ssl_certificate_key` names the private key,
  which callers must never read.
"""

from __future__ import annotations

import posixpath

from nginx_fleet_analyzer.model import ParsedConfig
from nginx_fleet_analyzer.record import Record

_CONTEXTS = frozenset({"http", "server", "stream", "mail"})


class CertificateFile(Record):
    """One `ssl_certificate` value: the file it names, or why there is no file to read."""

    __slots__ = ("path", "reason")

    # The resolved path; for `data:` and variable values, the value as written (shortened).
    path: str
    reason: str | None

    def __init__(self, path: str, reason: str | None) -> None:
        self.path = path
        self.reason = reason


# A `data:` value is a whole PEM text: only its start names it.
_DATA_LABEL_CHARS = 40


def conf_prefix(config: ParsedConfig) -> str | None:
    """The directory of the main config file, which nginx resolves certificate paths against."""
    main = config.main_file
    # A file read alone (a site file, say) is not where nginx.conf lives.
    if main is None or config.partial or not posixpath.isabs(main):
        return None
    return posixpath.dirname(main)


def _file(value: str, base: str | None) -> CertificateFile:
    if value.startswith("data:"):
        return CertificateFile(
            value[:_DATA_LABEL_CHARS], "the certificate is inline in the config (data:)"
        )
    if "$" in value:
        return CertificateFile(value, "the path holds variables (a file per handshake)")
    if posixpath.isabs(value):
        return CertificateFile(posixpath.normpath(value), None)
    if base is None:
        return CertificateFile(value, "relative path and the config's directory is unknown")
    return CertificateFile(posixpath.normpath(posixpath.join(base, value)), None)


def certificate_files(
    config: ParsedConfig, *, base_dir: str | None = None
) -> list[CertificateFile]:
    """Every certificate named by `ssl_certificate`, in first-seen order, each path once.

    `base_dir` resolves relative paths (the directory of the main config file by default)."""
    base = base_dir if base_dir is not None else conf_prefix(config)
    found: dict[str, CertificateFile] = {}
    for node in config.find("ssl_certificate"):
        if node.args and node.context in _CONTEXTS:
            certificate = _file(node.args[0], base)
            found.setdefault(certificate.path, certificate)
    return list(found.values())
