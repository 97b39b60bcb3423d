"""What an nginx `ssl_ciphers` string enables, expanded by OpenSSL itself (Python's `ssl`).

OpenSSL's cipher strings are a small language (aliases, `+` intersections, `!`/`-`/`+`
prefixes, `@STRENGTH`), so words are never matched: `!DES` removes single DES only, `HIGH`
includes anonymous suites, `DEFAULT` is a list of its own. The analysing machine's OpenSSL
expands the string into TLS <= 1.2 suites (TLSv1.3 suites are set by `ssl_conf_command`, never
by `ssl_ciphers`, so they are left out).

Security level: `:@SECLEVEL=0` is appended before expanding. The level only decides which
suites a handshake may pick later, not what `SSL_CTX_set_cipher_list` keeps, so the expansion
shows every suite the string names; the finding is about the string, and an older host or one
configured with a lower level would offer them. (Measured with Debian 12's nginx 1.22.1 on
OpenSSL 3.0: a string that matches nothing fails `nginx -t` with
`SSL_CTX_set_cipher_list(...) failed ... no cipher match`; `ALL:!DES` and `NULL-MD5` pass.)

Legacy suites: OpenSSL 3 no longer builds RC4, 3DES, single DES or EXPORT suites, so its
expansion cannot show them, while hosts with OpenSSL 1.1.1 or 1.0.2 still enable them. For
those suites only, `_LEGACY` lists each one with the aliases OpenSSL 1.1.1 gives it (1.0.2 for
EXPORT) and `_legacy_enabled` replays OpenSSL's rule processing on them: which suites end up
enabled does not depend on the others, so the replay is exact for membership.
"""

from __future__ import annotations

import re
from functools import lru_cache

from nginx_fleet_analyzer.record import Record

# Families of broken or unauthenticated suites, in the order findings name them.
WEAK_FAMILIES = ("RC4", "3DES", "DES", "MD5", "NULL", "EXPORT", "aNULL")
_SEPARATORS = re.compile(r"[:, ;]+")
# OpenSSL 1.1.x: the DEFAULT keyword at the start of a string.
_DEFAULT_RULES = "ALL:!COMPLEMENTOFDEFAULT:!eNULL"
_EVERYTHING = "ALL:COMPLEMENTOFALL"
_ANY_LEVEL = ":@SECLEVEL=0"


class Suite(Record):
    """One TLS <= 1.2 suite the string enables, with the fields OpenSSL reports."""

    __slots__ = ("auth", "bits", "digest", "kea", "name", "symmetric")

    name: str
    kea: str
    auth: str
    symmetric: str | None
    digest: str | None
    bits: int

    def __init__(
        self,
        name: str,
        kea: str,
        auth: str,
        symmetric: str | None,
        digest: str | None,
        bits: int,
    ) -> None:
        self.name = name
        self.kea = kea
        self.auth = auth
        self.symmetric = symmetric
        self.digest = digest
        self.bits = bits

    @property
    def weaknesses(self) -> tuple[str, ...]:
        """The weak families this suite belongs to (empty when it is sound)."""
        found = []
        cipher = self.symmetric or ""
        if cipher.startswith("rc4"):
            found.append("RC4")
        if cipher.startswith("des-ede3"):
            found.append("3DES")
        elif cipher.startswith("des"):
            found.append("DES")
        if self.digest == "md5":
            found.append("MD5")
        if self.symmetric is None:
            found.append("NULL")
        if self.name.startswith("EXP"):
            found.append("EXPORT")
        if self.auth == "auth-null":
            found.append("aNULL")
        return tuple(found)


class Expansion(Record):
    """The suites a cipher string enables here, plus legacy ones older OpenSSL would enable."""

    __slots__ = ("accepted", "legacy", "openssl", "spec", "suites")

    spec: str
    # False when this OpenSSL selects no suite: nginx -t fails with the same OpenSSL.
    accepted: bool
    suites: tuple[Suite, ...]
    # Legacy suites (absent from this OpenSSL) the string enables on OpenSSL 1.1.1 and older.
    legacy: tuple[str, ...]
    openssl: str

    def __init__(
        self,
        spec: str,
        accepted: bool,
        suites: tuple[Suite, ...],
        legacy: tuple[str, ...],
        openssl: str,
    ) -> None:
        self.spec = spec
        self.accepted = accepted
        self.suites = suites
        self.legacy = legacy
        self.openssl = openssl

    def weak(self) -> dict[str, list[str]]:
        """Weak family -> names of the enabled suites in it (this OpenSSL's, then legacy)."""
        found: dict[str, list[str]] = {}
        for suite in self.suites:
            for family in suite.weaknesses:
                found.setdefault(family, []).append(suite.name)
        for name in self.legacy:
            for family in _LEGACY[name][1]:
                found.setdefault(family, []).append(name)
        return {family: found[family] for family in WEAK_FAMILIES if family in found}


@lru_cache(maxsize=256)
def expand(spec: str) -> Expansion:
    """Expand an `ssl_ciphers` value (cached per string)."""
    # `_ssl` is the C module under `ssl`: the context it makes expands cipher strings exactly as
    # ssl.SSLContext does (same OpenSSL calls), and importing it costs ~4 ms where `ssl` (socket,
    # enum conversions) costs ~20 ms of every CLI run. Imported here: configs without
    # ssl_ciphers skip even that.
    import _ssl

    legacy = tuple(n for n in _legacy_enabled(spec) if n not in _local_names())
    try:
        suites = tuple(_suite(c) for c in _openssl_list(spec + _ANY_LEVEL))
        accepted = True
    except _ssl.SSLError:
        suites, accepted = (), False
    return Expansion(spec, accepted, suites, legacy, _ssl.OPENSSL_VERSION)


def _openssl_list(spec: str) -> list[dict[str, object]]:
    """The TLS <= 1.2 suites OpenSSL selects for a string; SSLError when it selects none."""
    import _ssl

    context = _ssl._SSLContext(_ssl.PROTOCOL_TLS_CLIENT)
    context.set_ciphers(spec)
    return [c for c in context.get_ciphers() if c["protocol"] != "TLSv1.3"]  # type: ignore[misc]


@lru_cache(maxsize=1)
def _local_names() -> frozenset[str]:
    """Every TLS <= 1.2 suite this OpenSSL implements."""
    return frozenset(str(c["name"]) for c in _openssl_list(_EVERYTHING + _ANY_LEVEL))


def _suite(cipher: dict[str, object]) -> Suite:
    symmetric, digest, bits = cipher.get("symmetric"), cipher.get("digest"), cipher.get("alg_bits")
    return Suite(
        name=str(cipher["name"]),
        kea=str(cipher.get("kea")),
        auth=str(cipher.get("auth")),
        symmetric=symmetric if isinstance(symmetric, str) else None,
        digest=digest if isinstance(digest, str) else None,
        bits=bits if isinstance(bits, int) else 0,
    )


def _legacy_enabled(spec: str) -> list[str]:
    """Legacy suites a string leaves enabled, by OpenSSL's rules (add, `-` delete, `!` kill)."""
    tokens = [t for t in _SEPARATORS.split(spec.strip()) if t]
    if tokens and tokens[0] == "DEFAULT":
        tokens[:1] = _DEFAULT_RULES.split(":")
    enabled = []
    for name, (aliases, _) in _LEGACY.items():
        active = killed = False
        for token in tokens:
            op = token[0] if token[0] in "!-+" else ""
            words = token[len(op) :].split("+")
            if token.startswith("@") or not all(w in aliases for w in words):
                continue
            if op == "!":
                killed, active = True, False
            elif op == "-":
                active = False
            elif op == "" and not killed:
                active = True
            # '+' only moves suites already enabled to the end: order, not membership.
        if active:
            enabled.append(name)
    return enabled


def _legacy_table() -> dict[str, tuple[frozenset[str], tuple[str, ...]]]:
    """Legacy suite name -> (its OpenSSL aliases, its weak families)."""
    exchanges = {
        "RSA": {"kRSA", "RSA", "aRSA"},
        "DHE-RSA": {"kDHE", "kEDH", "DHE", "EDH", "aRSA", "DH"},
        "DHE-DSS": {"kDHE", "kEDH", "DHE", "EDH", "aDSS", "DSS", "DH"},
        "ECDHE-RSA": {"kECDHE", "kEECDH", "ECDHE", "EECDH", "aRSA", "ECDH"},
        "ECDHE-ECDSA": {"kECDHE", "kEECDH", "ECDHE", "EECDH", "aECDSA", "ECDSA", "ECDH"},
        # Anonymous suites were never in DEFAULT (COMPLEMENTOFDEFAULT names them).
        "ADH": {"kDHE", "kEDH", "ADH", "aNULL", "DH", "COMPLEMENTOFDEFAULT"},
        "AECDH": {"kECDHE", "kEECDH", "AECDH", "aNULL", "ECDH", "COMPLEMENTOFDEFAULT"},
    }
    ciphers = {
        # OpenSSL 1.1 moved 3DES from HIGH to MEDIUM and flags RC4 and 3DES "not default".
        "RC4": ({"RC4", "MEDIUM", "COMPLEMENTOFDEFAULT"}, ("RC4",)),
        "3DES": ({"3DES", "MEDIUM", "COMPLEMENTOFDEFAULT"}, ("3DES",)),
        "DES": ({"DES", "LOW", "COMPLEMENTOFDEFAULT"}, ("DES",)),
        "EXP-RC4": ({"RC4", "EXP", "EXPORT", "EXPORT40", "COMPLEMENTOFDEFAULT"}, ("RC4", "EXPORT")),
        "EXP-DES": ({"DES", "EXP", "EXPORT", "EXPORT40", "COMPLEMENTOFDEFAULT"}, ("DES", "EXPORT")),
    }
    macs = {"MD5": ({"MD5"}, ("MD5",)), "SHA": ({"SHA1", "SHA"}, ())}
    # (names, exchange, cipher, mac): the names OpenSSL 1.0.2 and 1.1.1 spell the suite with.
    suites = [
        (("RC4-SHA",), "RSA", "RC4", "SHA"),
        (("RC4-MD5",), "RSA", "RC4", "MD5"),
        (("ECDHE-RSA-RC4-SHA",), "ECDHE-RSA", "RC4", "SHA"),
        (("ECDHE-ECDSA-RC4-SHA",), "ECDHE-ECDSA", "RC4", "SHA"),
        (("ADH-RC4-MD5",), "ADH", "RC4", "MD5"),
        (("AECDH-RC4-SHA",), "AECDH", "RC4", "SHA"),
        (("EXP-RC4-MD5",), "RSA", "EXP-RC4", "MD5"),
        (("EXP-ADH-RC4-MD5",), "ADH", "EXP-RC4", "MD5"),
        (("DES-CBC3-SHA",), "RSA", "3DES", "SHA"),
        (("EDH-RSA-DES-CBC3-SHA", "DHE-RSA-DES-CBC3-SHA"), "DHE-RSA", "3DES", "SHA"),
        (("EDH-DSS-DES-CBC3-SHA", "DHE-DSS-DES-CBC3-SHA"), "DHE-DSS", "3DES", "SHA"),
        (("ECDHE-RSA-DES-CBC3-SHA",), "ECDHE-RSA", "3DES", "SHA"),
        (("ECDHE-ECDSA-DES-CBC3-SHA",), "ECDHE-ECDSA", "3DES", "SHA"),
        (("ADH-DES-CBC3-SHA",), "ADH", "3DES", "SHA"),
        (("AECDH-DES-CBC3-SHA",), "AECDH", "3DES", "SHA"),
        (("DES-CBC-SHA",), "RSA", "DES", "SHA"),
        (("EDH-RSA-DES-CBC-SHA",), "DHE-RSA", "DES", "SHA"),
        (("EDH-DSS-DES-CBC-SHA",), "DHE-DSS", "DES", "SHA"),
        (("ADH-DES-CBC-SHA",), "ADH", "DES", "SHA"),
        (("EXP-DES-CBC-SHA",), "RSA", "EXP-DES", "SHA"),
        (("EXP-EDH-RSA-DES-CBC-SHA",), "DHE-RSA", "EXP-DES", "SHA"),
        (("EXP-EDH-DSS-DES-CBC-SHA",), "DHE-DSS", "EXP-DES", "SHA"),
        (("EXP-ADH-DES-CBC-SHA",), "ADH", "EXP-DES", "SHA"),
    ]
    table: dict[str, tuple[frozenset[str], tuple[str, ...]]] = {}
    for names, exchange, cipher, mac in suites:
        cipher_aliases, cipher_families = ciphers[cipher]
        mac_aliases, mac_families = macs[mac]
        anonymous = ("aNULL",) if "aNULL" in exchanges[exchange] else ()
        aliases = {"ALL", "SSLv3", "TLSv1", *names, *exchanges[exchange]}
        aliases |= cipher_aliases | mac_aliases
        families = tuple(
            f for f in WEAK_FAMILIES if f in (*cipher_families, *mac_families, *anonymous)
        )
        # One entry per suite under its first name; every spelling matches it.
        table[names[0]] = (frozenset(aliases), families)
    return table


_LEGACY = _legacy_table()
