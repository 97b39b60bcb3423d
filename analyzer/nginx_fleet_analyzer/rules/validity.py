"""Validity rules: what `nginx -t` would reject (V-context, V-args, V-unknown, V-dup, V-deprecated).

Parse errors are reported here too: token-level problems (unterminated quote, missing ';',
binary content) under V-args, unbalanced braces and include loops under V-context.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from nginx_fleet_analyzer.arguments import argument_problem
from nginx_fleet_analyzer.directives import (
    BLOCK_DIRECTIVES,
    OPTIONAL_MODULES,
    RAW_BLOCK_SUFFIX,
    Spec,
    context_code,
    matching_spec,
    so_files,
    specs,
)
from nginx_fleet_analyzer.facts import HostFacts, Version
from nginx_fleet_analyzer.findings import Category, Finding, Fix, Severity
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.record import replace
from nginx_fleet_analyzer.rules import RuleContext, get_rule, rule
from nginx_fleet_analyzer.rules._support import add_to_main

_PLACES = {
    "main": "the main context",
    "events": "the events block",
    "http": "the http block",
    "srv": "a server block",
    "loc": "a location",
    "ups": "an upstream block",
    "sif": "an if block in a server",
    "lif": "an if block in a location",
    "lmt": "a limit_except block",
    "stream": "the stream block",
    "ssrv": "a stream server",
    "sups": "a stream upstream",
    "mail": "the mail block",
    "msrv": "a mail server",
}
# Without a reported version, only deprecations older than every maintained distro's nginx count.
_OLD_DEPRECATION: Version = (1, 20, 0)
_HTTP2_DIRECTIVE: Version = (1, 25, 1)


_Checked = list[tuple[Directive, str, Spec | None]]


def _checked(config: ParsedConfig) -> _Checked:
    """Directives whose context nginx checks (not map/types entries, not inside unknown blocks),
    with their context code and matching table row (once per config: five rules ask)."""
    cached = config.derived.get("checked_contexts")
    if not isinstance(cached, list):
        cached = config.derived["checked_contexts"] = [
            (node, code, matching_spec(node))
            for node in config.walk()
            if (code := context_code(node)) is not None
        ]
    return cached


def _version_text(version: Version) -> str:
    return ".".join(str(p) for p in version)


def _where(node: Directive) -> str:
    return node.parent.label if node.parent is not None else "main"


def _parse_errors(ctx: RuleContext, rule_id: str) -> Iterator[Finding]:
    reporter = get_rule(rule_id)
    for error in ctx.config.errors:
        if error.rule == rule_id:
            yield reporter.finding(
                file=error.file,
                line=error.line,
                message=error.message,
                evidence={"column": error.column, "parse_error": True},
            )


def _allowed_places(name: str) -> str:
    codes: list[str] = []
    for row in specs(name):
        codes.extend(c for c in row.contexts.split() if c not in codes)
    return ", ".join(_PLACES.get(c, c) for c in codes)


@rule("V-context", Category.VALIDITY, Severity.ERROR)
def directive_context(ctx: RuleContext) -> Iterator[Finding]:
    """A directive in a block where nginx does not allow it."""
    yield from _parse_errors(ctx, "V-context")
    reporter = get_rule("V-context")
    loaded = _loaded_modules(ctx.config)
    for node, code, spec in _checked(ctx.config):
        if spec is not None or not specs(node.name) or _dormant(ctx, node, loaded):
            continue
        message = f'"{node.name}" is not allowed in {_PLACES.get(code, code)}'
        if node.via is not None:
            message += (
                f" (this file is pulled in by the include at {node.via.file}:{node.via.line})"
            )
        message += f"; it belongs in {_allowed_places(node.name)}"
        if node.block is not None:
            fix = Fix(
                "none",
                node.name,
                node.args,
                node.file,
                node.line,
                _where(node),
                f'drop the extra "{node.name}" block level and keep its contents',
            )
        else:
            fix = _move_fix(ctx.config, node)
        yield reporter.finding(
            at=node,
            message=message,
            evidence={"context": code, "included_from": _include_site(node)},
            fix=fix,
        )


def _move_fix(config: ParsedConfig, node: Directive) -> Fix:
    """Remove the misplaced line; add it to the nearest enclosing block that allows it.

    Where that block already sets the directive, or no enclosing block allows it, removing the
    line is the whole fix (nginx refuses the config as it is, so nothing ran with it).
    """
    remove = Fix(
        "remove",
        node.name,
        node.args,
        node.file,
        node.line,
        _where(node),
        f"set it in {_allowed_places(node.name)} instead",
    )
    allowed = {code for row in specs(node.name) for code in row.contexts.split()}
    child: Directive = node
    while child.parent is not None:
        child = child.parent
        code = context_code(child)
        if code is None:
            break
        if code not in allowed:
            continue
        target = child.parent
        siblings = target.block if target is not None else config.root
        if any(s.name == node.name for s in siblings or ()):
            return remove
        add = (
            Fix("add", node.name, node.args, target.file, target.line, target.label)
            if target is not None
            else add_to_main(config, node.name, node.args)
        )
        return replace(remove, note=f"moved to {add.context}", also=(add,))
    return remove


def _include_site(node: Directive) -> str | None:
    return f"{node.via.file}:{node.via.line}" if node.via is not None else None


@rule("V-args", Category.VALIDITY, Severity.ERROR)
def directive_arguments(ctx: RuleContext) -> Iterator[Finding]:
    """Wrong number or form of arguments, or a block where a ';' belongs (and vice versa)."""
    yield from _parse_errors(ctx, "V-args")
    reporter = get_rule("V-args")
    loaded = _loaded_modules(ctx.config)
    for node, _code, spec in _checked(ctx.config):
        if spec is None or (spec.package and _dormant(ctx, node, loaded)):
            continue
        problem = _block_problem(node, spec) or argument_problem(spec, node.name, node.args)
        if problem is None:
            continue
        yield reporter.finding(
            at=node,
            message=problem,
            evidence={"args": node.args, "expected": spec.args, "kind": spec.kind or None},
            # Which arguments were meant is for a person to say.
            fix=Fix("none", node.name, node.args, node.file, node.line, _where(node), problem),
        )


def _block_problem(node: Directive, spec: Spec) -> str | None:
    wants_block = spec.block or (
        node.name in BLOCK_DIRECTIVES
        and not (
            node.name == "server" and node.parent is not None and node.parent.name == "upstream"
        )
    )
    if wants_block and node.block is None:
        return f'directive "{node.name}" has no opening "{{"'
    if not wants_block and node.block is not None and not node.name.endswith(RAW_BLOCK_SUFFIX):
        return f'directive "{node.name}" is not terminated by ";" (it has a block)'
    return None


def _loaded_modules(config: ParsedConfig) -> set[str]:
    """What `load_module modules/ngx_X_module.so` lines load: the .so file names
    ('ngx_X_module.so') and the module names ('X_module', 'X')."""
    names: set[str] = set()
    for node in config.top("load_module"):
        if node.args:
            so = node.args[0].rsplit("/", 1)[-1]
            base = so.removesuffix(".so").removeprefix("ngx_")
            names.update((so, base, base.removesuffix("_module")))
    return names


def _words(name: str) -> set[str]:
    """Distinctive words of a module project or directory name: 'ngx_lua-0.10.26' -> {'lua'}."""
    name = re.sub(r"[-_.]v?\d[\w.]*$", "", name.lower())
    return {w for w in re.split(r"[-_./]+", name) if w and w not in _GENERIC_WORDS}


_GENERIC_WORDS = frozenset({"ngx", "nginx", "module", "http", "stream", "mod", "filter"})


def _compiled_in(spec: Spec, facts: HostFacts | None) -> bool:
    """Whether the facts say the build has this third-party module (nginx -V, --add-module)."""
    if facts is None:
        return False
    if spec.module in facts.modules:
        return True
    wanted = _words(spec.package)
    return any(wanted & _words(extra) for extra in facts.extra_modules)


def _dormant(ctx: RuleContext, node: Directive, loaded: set[str]) -> bool:
    """Whether only third-party modules provide this directive and none of them is loaded or
    compiled in: nginx would call it unknown, which V-unknown says, not misplaced."""
    rows = specs(node.name)
    if any(not r.package for r in rows):
        return False
    return not any(any(so in loaded for so in r.so) or _compiled_in(r, ctx.facts) for r in rows)


def _is_whole_config(config: ParsedConfig) -> bool:
    """Whether this is a whole nginx.conf (main context present), so absent load_module lines
    really are absent; a lone site file cannot show them (its `http` is the assumed one)."""
    if config.partial:
        return False
    return bool(config.top("events") or config.top("http") or config.top("load_module"))


@rule("V-unknown", Category.VALIDITY, Severity.ERROR)
def unknown_directive(ctx: RuleContext) -> Iterator[Finding]:
    """A directive no known module provides (error), one of a module this config does not load,
    or one this nginx version or build does not have (warnings: a known name)."""
    reporter = get_rule("V-unknown")
    facts = ctx.facts
    loaded = _loaded_modules(ctx.config)
    # Loaded or compiled-in modules the table does not cover may provide any name.
    foreign = sorted(n for n in loaded if n.endswith(".so") and n not in so_files())
    third_party = bool(foreign) or bool(facts is not None and facts.extra_modules)
    whole = _is_whole_config(ctx.config)
    # Directives of third-party modules that are not loaded, by package: one finding per
    # missing module (its load_module line), not one per directive it provides.
    dormant: dict[str, list[tuple[Directive, Spec]]] = {}
    for node, code, matched in _checked(ctx.config):
        rows = specs(node.name)
        if not rows:
            note = ""
            if foreign:
                note = f" (it may come from {', '.join(foreign)}, loaded by this config)"
            elif third_party:
                note = " (it may come from a third-party module of this build)"
            yield reporter.finding(
                at=node,
                message=f'unknown directive "{node.name}": no nginx or known third-party '
                "module provides it" + note,
                evidence={"context": code, "third_party_modules": third_party},
                severity=Severity.WARNING if third_party else None,
            )
            continue
        own = [r for r in rows if not r.package]
        if not own:
            module = matched or rows[0]
            if not _provided(ctx, module, loaded):
                dormant.setdefault(module.package, []).append((node, module))
            continue
        spec = _for_version(node, own, facts.nginx_version if facts else None) or matched
        spec = spec or own[0]
        missing = _missing_reason(spec, ctx, loaded)
        if missing is not None:
            reason, severity = missing
            yield reporter.finding(
                at=node,
                message=f'"{node.name}" is unknown to this nginx: {reason}',
                evidence={
                    "module": spec.module,
                    "since": _since(spec),
                    "last": _version_text(spec.last) if spec.last else None,
                    "removed": _version_text(spec.removed) if spec.removed else None,
                    "nginx_version": (
                        _version_text(facts.nginx_version)
                        if facts is not None and facts.nginx_version is not None
                        else None
                    ),
                },
                severity=severity,
            )
    for uses in dormant.values():
        yield _third_party(ctx, uses, whole)


def _provided(ctx: RuleContext, spec: Spec, loaded: set[str]) -> bool:
    """Whether a third-party module's directive is available: loaded or compiled in."""
    return any(so in loaded for so in spec.so) or _compiled_in(spec, ctx.facts)


def _third_party(ctx: RuleContext, uses: list[tuple[Directive, Spec]], whole: bool) -> Finding:
    """Directives only a third-party module provides, with the module neither loaded nor
    compiled in: one finding at the first of them (one load_module line fixes them all)."""
    node, spec = uses[0]
    so = spec.so[0] if spec.so else f"ngx_{spec.module}.so"
    names = list(dict.fromkeys(n.name for n, _ in uses))
    more = ""
    if len(uses) > 1:
        others = ", ".join(names[1:4]) + (", ..." if len(names) > 4 else "")
        more = f" (and {len(uses) - 1} more lines that need it"
        more += f": {others})" if others else ")"
    message = (
        f'directive "{node.name}"{more} is from the third-party module {spec.module} '
        f"({spec.package}), which this config does not load (load_module modules/{so};); "
        "fine only if the build has it compiled in (nginx -V lists --add-module)"
    )
    severity = Severity.WARNING
    if not whole:
        # A lone file cannot show the main context's load_module lines.
        message = (
            f'directive "{node.name}"{more} is from the third-party module {spec.module} '
            f"({spec.package}); the main config must load it (load_module modules/{so};) "
            "or the build must include it"
        )
        severity = Severity.INFO
    return get_rule("V-unknown").finding(
        at=node,
        message=message,
        evidence={
            "module": spec.module,
            "package": spec.package,
            "so": list(spec.so),
            "directives": names,
            "uses": len(uses),
        },
        severity=severity,
    )


def _for_version(node: Directive, rows: list[Spec], version: Version | None) -> Spec | None:
    """The row for this context that the given nginx version has, else any row for it."""
    code = context_code(node)
    fitting = [
        r for r in rows if r.contexts == "*" or (code is not None and code in r.contexts.split())
    ]
    if version is not None:
        for row in fitting:
            if (row.since is None or version >= row.since) and (
                row.removed is None or version < row.removed
            ):
                return row
    return fitting[0] if fitting else None


def _since(spec: Spec) -> str | None:
    return _version_text(spec.since) if spec.since is not None else None


def _missing_reason(spec: Spec, ctx: RuleContext, loaded: set[str]) -> tuple[str, Severity] | None:
    """Why this nginx lacks the directive, with the severity, or None.

    Always a warning: the name is known to nginx (the error is kept for names no known module
    has). A version outside the directive's releases comes from a reported or given version,
    which can lag an upgrade; which modules a build has is read from its configure arguments,
    which a packager's loadable modules can outgrow (docs/analyzer-rules.md)."""
    facts = ctx.facts
    if facts is None:
        return None
    version = facts.nginx_version
    refused = (
        f"; nginx -t of {_version_text(version)} refuses it: upgrade, or check the reported version"
        if version is not None
        else ""
    )
    if version is not None and spec.since is not None and version < spec.since:
        return (
            f"it appeared in nginx {_version_text(spec.since)} "
            f"and this host runs {_version_text(version)}{refused}",
            Severity.WARNING,
        )
    if (
        version is not None
        and spec.removed is not None
        and spec.deprecated is None  # V-deprecated reports those
        and version >= spec.removed
    ):
        last = f"nginx {_version_text(spec.last)}" if spec.last else "an older nginx"
        return (
            f"it was last in {last} (removed in {_version_text(spec.removed)}) "
            f"and this host runs {_version_text(version)}{refused}",
            Severity.WARNING,
        )
    if not facts.modules_known:
        return None
    if spec.module in facts.disabled_modules:
        return f"the build was configured --without-{spec.module}", Severity.WARNING
    if spec.module not in OPTIONAL_MODULES or spec.module in facts.modules:
        return None
    if spec.module in loaded or any(so in loaded for so in spec.so):
        return None
    return (
        f"it needs the {spec.module}, which this nginx build does not include",
        Severity.WARNING,
    )


@rule("V-dup", Category.VALIDITY, Severity.ERROR)
def duplicate_directive(ctx: RuleContext) -> Iterator[Finding]:
    """A directive that may appear once per block appears twice ("is duplicate")."""
    reporter = get_rule("V-dup")
    # Directives sharing a parent block, keyed by the block (None for main) and the name.
    first: dict[tuple[int, str], Directive] = {}
    for node, _code, spec in _checked(ctx.config):
        if spec is None or spec.repeat:
            continue
        key = (id(node.parent), node.name)
        earlier = first.get(key)
        if earlier is None:
            first[key] = node
            continue
        yield reporter.finding(
            at=node,
            message=(
                f'"{node.name}" is duplicate: already set at {earlier.file}:{earlier.line} '
                "in the same block"
            ),
            evidence={"first": f"{earlier.file}:{earlier.line}", "args": node.args},
            fix=Fix(
                "remove",
                earlier.name,
                earlier.args,
                earlier.file,
                earlier.line,
                _where(earlier),
                "keep the later one",
            ),
        )
        first[key] = node


@rule("V-deprecated", Category.VALIDITY, Severity.ERROR)
def deprecated_directive(ctx: RuleContext) -> Iterator[Finding]:
    """Deprecated or removed syntax for the reported nginx version (listen http2, ssl on)."""
    version = ctx.nginx_version
    yield from _listen_http2(ctx, version)
    reporter = get_rule("V-deprecated")
    for node, _code, spec in _checked(ctx.config):
        if spec is None or spec.deprecated is None:
            continue
        if version is None and spec.deprecated >= _OLD_DEPRECATION:
            continue
        if version is not None and version < spec.deprecated:
            continue
        removed = spec.removed is not None and version is not None and version >= spec.removed
        message = f'"{node.name}" is deprecated since nginx {_version_text(spec.deprecated)}'
        if removed and spec.removed is not None:
            message = (
                f'"{node.name}" was removed in nginx {_version_text(spec.removed)}; '
                f"nginx {_version_text(version or spec.removed)} rejects it"
            )
        note = "remove it"
        if node.name == "ssl":
            note = 'remove it and add the "ssl" parameter to this server\'s listen directives'
        yield reporter.finding(
            at=node,
            message=f"{message}; {note}",
            evidence={
                "deprecated": _version_text(spec.deprecated),
                "removed": _version_text(spec.removed) if spec.removed else None,
                "nginx_version": _version_text(version) if version else None,
            },
            fix=Fix("remove", node.name, node.args, node.file, node.line, _where(node), note),
            severity=None if removed else Severity.WARNING,
        )


def _listen_http2(ctx: RuleContext, version: Version | None) -> Iterator[Finding]:
    if version is None or version < _HTTP2_DIRECTIVE:
        return
    reporter = get_rule("V-deprecated")
    for server in ctx.config.servers():
        for listen in server.children("listen"):
            if "http2" not in listen.args:
                continue
            kept = [a for a in listen.args if a != "http2"]
            yield reporter.finding(
                at=listen,
                message=(
                    f'"listen ... http2" is deprecated since nginx 1.25.1 (this host runs '
                    f'{_version_text(version)}); use "http2 on;" in the server block'
                ),
                evidence={"listen": listen.args, "nginx_version": _version_text(version)},
                fix=Fix(
                    "set",
                    "listen",
                    kept,
                    listen.file,
                    listen.line,
                    server.label,
                    'drop "http2" from listen and add "http2 on;" to the server block',
                    also=()
                    if server.children("http2")
                    else (Fix("add", "http2", ["on"], server.file, server.line, server.label),),
                ),
                severity=Severity.WARNING,
            )
