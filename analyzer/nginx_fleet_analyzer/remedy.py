"""From findings to a checked patch of the dump's files (docs/changes.md, section 1).

A finding's fix becomes a text edit of the original file (the directive's own span is rewritten,
or a line is inserted at the block's indentation, or a directive's line removed); the patched
files are parsed and analysed again, and the patch is offered only when every targeted finding
is gone and no new error or warning appeared. Diffs and line operations come from difflib.
"""

from __future__ import annotations

import difflib
import hashlib

from nginx_fleet_analyzer.dump import split_dump
from nginx_fleet_analyzer.engine import Report, analyze
from nginx_fleet_analyzer.facts import HostFacts, MetricsWindow
from nginx_fleet_analyzer.findings import Finding, Fix, Severity
from nginx_fleet_analyzer.loader import parse_dump
from nginx_fleet_analyzer.model import Directive, ParsedConfig
from nginx_fleet_analyzer.parser import FileTree

# The agent's redaction marker: a patch must never ask it to write one.
REDACTED = "[redacted]"
# Fix actions this module turns into text edits; others are manual.
APPLICABLE = ("set", "add", "remove", "replace")


# One edit of a fix with its entry in a proposal's `edits`; a (file, line) place of the dump.
EditPair = tuple[Fix, dict[str, object]]
Place = tuple[str, int]


class EditError(Exception):
    """A fix that cannot be made into a text edit here (said in words for the UI)."""


def sha256_text(text: str) -> str:
    """SHA-256 of a file text's UTF-8 bytes (the contract's base/new hash)."""
    return hashlib.sha256(text.encode()).hexdigest()


def _at_line(config: ParsedConfig, file: str, line: int) -> list[Directive]:
    """The directives starting at file:line (indexed once per config: many edits, one walk)."""
    index = config.derived.get("directives_by_line")
    if index is None:
        table: dict[Place, list[Directive]] = {}
        for node in config.walk():
            table.setdefault((node.file, node.line), []).append(node)
        index = config.derived["directives_by_line"] = table
    return index.get((file, line), [])  # type: ignore[attr-defined,no-any-return]


def _node_at(config: ParsedConfig, file: str, line: int, name: str | None) -> Directive:
    """The directive `name` at file:line; any name (when None) if it is alone on its line."""
    found = _at_line(config, file, line)
    named = [n for n in found if n.name == name] if name is not None else found
    if len(named) == 1 or (named and name is not None):
        return named[0]
    what = name or "one directive"
    raise EditError(f"no {what} at {file}:{line} in the config")


def _block_at(config: ParsedConfig, file: str, line: int, context: str) -> Directive | None:
    """The block a fix adds into: the block directive at file:line (None: the main context)."""
    for node in _at_line(config, file, line):
        if node.block is not None:
            return node
    if context == "main":
        return None
    raise EditError(f"no block at {file}:{line} to add into")


def _line_bounds(text: str, offset: int) -> tuple[int, int]:
    """Start and end (before its line break) of the line holding offset."""
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    end = len(text) if end < 0 else end
    if end > start and text[end - 1] == "\r":
        end -= 1
    return start, end


def _quoted(arg: str) -> str:
    """An argument as nginx reads it back: quoted when it holds spaces, quotes or syntax."""
    if arg and not any(c in arg for c in " \t\"';{}#\\"):
        return arg
    if "'" not in arg:
        return f"'{arg}'"
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _statement(directive: str, args: list[str]) -> str:
    # The name is quoted too: a map or geo entry's key may be '' or hold spaces.
    return " ".join([_quoted(directive), *map(_quoted, args)]) + ";"


def _edit_text(texts: dict[str, str], config: ParsedConfig, fix: Fix, args: list[str]) -> None:
    """Apply one fix to the file texts in place (offsets come from the unpatched config)."""
    text = texts.get(fix.file)
    if text is None:
        raise EditError(f"{fix.file} is not in the dump")
    if fix.action in ("set", "replace"):
        # `replace` puts another directive in the line's place (add_header → default_type).
        name = fix.directive if fix.action == "set" else None
        node = _node_at(config, fix.file, fix.line, name)
        if node.block is not None:
            raise EditError(f"{node.name} at {fix.file}:{fix.line} is a block")
        texts[fix.file] = text[: node.start] + _statement(fix.directive, args) + text[node.end :]
    elif fix.action == "remove":
        node = _node_at(config, fix.file, fix.line, fix.directive)
        start, end = _line_bounds(text, node.start)
        if text[start:end].strip() != text[node.start : node.end].strip():
            raise EditError(f"{fix.directive} shares line {fix.line} with other text")
        after = end + (2 if text[end : end + 2] == "\r\n" else 1 if end < len(text) else 0)
        texts[fix.file] = text[:start] + text[after:]
    elif fix.action == "add":
        _insert(texts, config, fix, args, text)
    else:
        raise EditError(f"the fix of {fix.directive} ({fix.action}) is manual")


def _insert(
    texts: dict[str, str], config: ParsedConfig, fix: Fix, args: list[str], text: str
) -> None:
    """Insert the directive as the first line of its block, at the block's indentation."""
    block = _block_at(config, fix.file, fix.line, fix.context)
    newline = "\r\n" if "\r\n" in text else "\n"
    if block is None:
        indent, at = "", 0
    else:
        brace = text.find("{", block.start, block.end)
        if brace < 0:
            raise EditError(f"no '{{' for {block.label} at {fix.file}:{fix.line}")
        line_start, line_end = _line_bounds(text, brace)
        line_text = text[line_start:line_end]
        own = line_text[: len(line_text) - len(line_text.lstrip(" \t"))]
        if not text[brace + 1 : block.end - 1].strip():
            # An empty block written `events {}`: open it over three lines.
            inner = f"{own}    {_statement(fix.directive, args)}"
            opened = f"{{{newline}{inner}{newline}{own}}}"
            texts[fix.file] = text[:brace] + opened + text[block.end :]
            return
        if text[brace + 1 : line_end].strip():
            raise EditError(f"{block.label} at {fix.file}:{fix.line} is a one-line block")
        children = [c for c in block.block or [] if c.file == fix.file]
        if children:
            first_start, _ = _line_bounds(text, children[0].start)
            child_line = text[first_start : children[0].start]
            indent = child_line if not child_line.strip() else own + "    "
        else:
            indent = own + ("\t" if own.startswith("\t") else "    ")
        at = line_end + len(newline) if line_end < len(text) else line_end
    line = f"{indent}{_statement(fix.directive, args)}{newline}"
    texts[fix.file] = text[:at] + line + text[at:]


def _lines(text: str) -> list[str]:
    """The text's lines without terminators, split as the appliers split it (on LF only)."""
    return [line[:-1] if line.endswith("\r") else line for line in text.split("\n")]


def apply_ops(text: str, ops: list[dict[str, object]]) -> str:
    """The text with each op applied (a CRLF file stays CRLF), as the agent applies them."""
    lines = text.split("\n")
    crlf = len(lines) > 1 and all(line.endswith("\r") for line in lines[:-1])
    for op in sorted(ops, key=lambda item: int(item["start"]), reverse=True):  # type: ignore[call-overload]
        start = int(op["start"]) - 1  # type: ignore[call-overload]
        new = [line + "\r" if crlf else line for line in op["new"]]  # type: ignore[attr-defined]
        lines[start : start + int(op["count"])] = new  # type: ignore[call-overload]
    return "\n".join(lines)


def _ops(base: str, new: str) -> list[dict[str, object]]:
    """Line operations turning base into new (1-based start, count of base lines replaced)."""
    old_lines, new_lines = _lines(base), _lines(new)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    return [
        {"start": i1 + 1, "count": i2 - i1, "old": old_lines[i1:i2], "new": new_lines[j1:j2]}
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _dump(sections: list[tuple[str, str]]) -> str:
    return "".join(f"# configuration file {path}:\n{text}\n" for path, text in sections)


def _edits(findings: list[Finding], overrides: dict[str, list[str]]) -> list[EditPair]:
    """Every edit of the findings' fixes with its id (e1, e2, ...), the same edit once."""
    edits: list[EditPair] = []
    seen: set[tuple[str, str, str, int, tuple[str, ...]]] = set()
    for finding in findings:
        assert finding.fix is not None
        for fix in finding.fix.edits():
            # Two findings fixed together may need the same companion (http2 on; per server).
            identity = (fix.action, fix.directive, fix.file, fix.line, tuple(fix.args))
            if identity in seen:
                continue
            seen.add(identity)
            edit_id = f"e{len(edits) + 1}"
            edit: dict[str, object] = {
                "id": edit_id,
                "key": finding.key,
                "action": fix.action,
                "directive": fix.directive,
                "args": list(overrides.get(edit_id, fix.args)),
                "file": fix.file,
                "line": fix.line,
                "context": fix.context,
                "adjustable": fix.action in ("set", "add") and bool(fix.args),
            }
            edits.append((fix, edit))
    return edits


class Proposal:
    """A checked patch, or why none is offered (fields as in docs/changes.md)."""

    def __init__(self, **fields: object) -> None:
        self.fields = {
            "ok": False,
            "reason": "",
            "keys": [],
            "resolved": [],
            "introduced": [],
            "edits": [],
            "files": [],
            "diff": "",
            "score_before": None,
            "score_after": None,
            **fields,
        }

    @property
    def ok(self) -> bool:
        """Whether the diff may be offered."""
        return bool(self.fields["ok"])

    def to_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return dict(self.fields)


def applicable(finding: Finding) -> bool:
    """Whether every edit of the finding's fix can be made into a text edit here."""
    fix = finding.fix
    return fix is not None and all(edit.action in APPLICABLE for edit in fix.edits())


def propose(
    dump_text: str,
    keys: list[str],
    *,
    facts: HostFacts | None = None,
    metrics: MetricsWindow | None = None,
    overrides: dict[str, list[str]] | None = None,
) -> Proposal:
    """The checked patch that fixes these findings of the dump together."""
    overrides = dict(overrides or {})
    config = parse_dump(dump_text)
    before = analyze(config, facts, metrics)
    by_key = {f.key: f for f in before.findings}
    base = {"keys": list(keys), "score_before": before.score.overall}
    missing = [key for key in keys if key not in by_key]
    if missing:
        return Proposal(**base, reason=f"{missing[0]} is not in the analysis (stale)")
    targets = [by_key[key] for key in keys]
    for finding in targets:
        if not applicable(finding):
            return Proposal(**base, reason=f"the fix of {finding.rule} is manual")
    pairs = _edits(targets, overrides)
    edits = [edit for _, edit in pairs]
    unknown = set(overrides) - {str(e["id"]) for e in edits}
    if unknown:
        return Proposal(**base, edits=edits, reason=f"no edit {sorted(unknown)[0]} to adjust")
    sections = split_dump(dump_text)
    try:
        texts = _patched(config, sections, pairs)
        files, diff = _file_patches(sections, texts)
    except EditError as error:
        return Proposal(**base, edits=edits, reason=str(error))
    after = analyze(
        parse_dump(_dump([(path, texts[path]) for path, _ in sections])), facts, metrics
    )
    resolved, introduced, reason = _verdict(before, after, targets)
    if not reason and not files:
        reason = "the patch changes nothing"
    return Proposal(
        **base,
        ok=not reason,
        reason=reason,
        resolved=resolved,
        introduced=introduced,
        edits=edits,
        files=files,
        diff=diff,
        score_after=after.score.overall,
    )


def _analyze_texts(
    sections: list[tuple[str, str]],
    texts: dict[str, str],
    facts: HostFacts | None,
    metrics: MetricsWindow | None,
    trees: dict[tuple[str, str], FileTree] | None = None,
) -> Report:
    """The analysis of the dump with its files' texts replaced by `texts`."""
    patched = _dump([(path, texts[path]) for path, _ in sections])
    return analyze(parse_dump(patched, trees), facts, metrics)


def _patched(
    config: ParsedConfig, sections: list[tuple[str, str]], pairs: list[EditPair]
) -> dict[str, str]:
    """The file texts with every edit made (EditError names the first that cannot be)."""
    texts = dict(sections)
    # Later lines first, so earlier offsets of the unpatched config stay valid; at one line the
    # later edit first, so lines added at one place read in the edits' order.
    order = sorted(range(len(pairs)), key=lambda i: (-pairs[i][0].line, -i))
    for fix, edit in (pairs[i] for i in order):
        args = [str(a) for a in edit["args"]]  # type: ignore[attr-defined]
        if any(REDACTED in a or "\n" in a or "\r" in a for a in args):
            raise EditError(f"value {' '.join(args)!r} cannot be written")
        _edit_text(texts, config, fix, args)
    return texts


def _file_patches(
    sections: list[tuple[str, str]], texts: dict[str, str], touched: set[str] | None = None
) -> tuple[list[dict[str, object]], str]:
    """Each changed file's line ops and hashes, and one unified diff of them all.

    `touched`: the only files the edits may have changed (all of them when None).
    """
    files: list[dict[str, object]] = []
    diffs: list[str] = []
    for path, old in sections:
        if touched is not None and path not in touched:
            continue
        new = texts[path]
        if new == old:
            continue
        ops = _ops(old, new)
        if apply_ops(old, ops) != new:
            # Mixed line endings: the ops could not reproduce the edit byte for byte.
            raise EditError(f"{path} has mixed line endings")
        files.append(
            {
                "path": path,
                "base_sha256": sha256_text(old),
                "new_sha256": sha256_text(new),
                "ops": ops,
            }
        )
        diffs.extend(
            difflib.unified_diff(
                old.splitlines(keepends=True),
                new.splitlines(keepends=True),
                fromfile=f"a{path}",
                tofile=f"b{path}",
            )
        )
    return files, "".join(line if line.endswith("\n") else line + "\n" for line in diffs)


def _verdict(
    before: Report, after: Report, targets: list[Finding]
) -> tuple[list[str], list[dict[str, object]], str]:
    """(targeted keys gone, new error/warning findings, why not offered or '')."""
    after_keys = {f.key for f in after.findings}
    before_keys = {f.key for f in before.findings}
    # A targeted rule reporting at a new place has moved, not gone (a value set to what the
    # finding complains of, a fix of one site of many): its findings count as still reported.
    moved = {f.rule: f for f in after.findings if f.key not in before_keys}
    resolved = [f.key for f in targets if f.key not in after_keys and f.rule not in moved]
    introduced = [
        f.to_dict()
        for f in after.findings
        if f.key not in before_keys and f.severity in (Severity.ERROR, Severity.WARNING)
    ]
    reason = ""
    if introduced:
        first = introduced[0]
        reason = f"introduces {first['rule']} at {first['file']}:{first['line']}"
    elif len(resolved) < len(targets):
        left = next(f for f in targets if f.key not in resolved)
        reason = f"{left.rule} is still reported after the patch"
        if left.rule in moved:
            reason += f" (now at {moved[left.rule].file}:{moved[left.rule].line})"
    return resolved, introduced, reason


def recommend(
    dump_text: str,
    *,
    facts: HostFacts | None = None,
    metrics: MetricsWindow | None = None,
    analysed: tuple[ParsedConfig, Report] | None = None,
) -> list[Proposal]:
    """The checked patch of every fixable finding of the dump, one proposal each.

    One analysis checks many patches: the fixes of findings whose edits touch different lines
    are made together and the config analysed once; every targeted finding that is gone, with
    nothing new at error or warning, is offered its own diff. A batch that introduces a
    finding is split (the suspects apart from the rest) and checked again; a finding still
    reported in a batch is not offered (the safe side). Scores after a patch are not computed
    here (`score_after` is None); `propose` checks one choice fully, as the control plane does
    again before an operator approves. `analysed`: the dump's parsed config and its analysis,
    when the caller has them (with the same facts and metrics), so they are not made again.
    """
    trees: dict[tuple[str, str], FileTree] = {}
    if analysed is None:
        config = parse_dump(dump_text, trees)
        before = analyze(config, facts, metrics)
    else:
        config, before = analysed
    sections = split_dump(dump_text)
    base = {"score_before": before.score.overall}
    out: dict[str, Proposal] = {}
    # Each finding's own edits, file patches and diff, made once.
    patches: dict[str, tuple[list[EditPair], list[dict[str, object]], str]] = {}
    for finding in before.findings:
        if not applicable(finding):
            continue
        pairs = _edits([finding], {})
        touched = {fix.file for fix, _ in pairs}
        try:
            files, diff = _file_patches(sections, _patched(config, sections, pairs), touched)
        except EditError as error:
            out[finding.key] = Proposal(**base, keys=[finding.key], reason=str(error))
            continue
        patches[finding.key] = (pairs, files, diff)
    by_key = {f.key: f for f in before.findings}
    queue = _batches([by_key[key] for key in patches])
    while queue:
        group = queue.pop()
        pairs = [pair for f in group for pair in patches[f.key][0]]
        texts = _patched(config, sections, pairs)
        after = _analyze_texts(sections, texts, facts, metrics, trees)
        resolved, introduced, reason = _verdict(before, after, group)
        if introduced and len(group) > 1:
            queue += _split(group, introduced)
            continue
        for finding in group:
            pairs, files, diff = patches[finding.key]
            fields: dict[str, object] = {"keys": [finding.key], "edits": [e for _, e in pairs]}
            if len(group) == 1:
                fields |= {"reason": reason, "introduced": introduced}
                fields |= {"resolved": resolved, "score_after": after.score.overall}
            elif finding.key in resolved:
                fields["resolved"] = [finding.key]
            else:
                # Safe side: not offered here; `propose` judges it alone when it is previewed.
                fields["reason"] = (
                    f"{finding.rule} is still reported with the config's other fixes made"
                )
            ok = not fields.get("reason") and bool(files)
            out[finding.key] = Proposal(**base, **fields, ok=ok, files=files, diff=diff)
    return [out[f.key] for f in before.findings if f.key in out]


def _split(group: list[Finding], introduced: list[dict[str, object]]) -> list[list[Finding]]:
    """A batch that introduced findings, as the rest and the suspects (else two halves).

    Suspects, checked apart: findings of a rule that now reports somewhere new (its grouping
    moved), then findings with an edit in a file where something new is reported.
    """
    rules = {item["rule"] for item in introduced}
    files = {item["file"] for item in introduced}
    same_rule = [f for f in group if f.rule in rules]
    same_file = [
        f
        for f in group
        if f.rule not in rules and any(e.file in files for e in f.fix.edits())  # type: ignore[union-attr]
    ]
    rest = [f for f in group if f not in same_rule and f not in same_file]
    tiers = [tier for tier in (rest, same_file, same_rule) if tier]
    if len(tiers) > 1:
        return tiers
    middle = len(group) // 2
    return [group[:middle], group[middle:]]


def _batches(findings: list[Finding]) -> list[list[Finding]]:
    """Findings in groups whose edits change different lines (adds into a block never clash)."""
    groups: list[tuple[set[Place], set[Place], list[Finding]]] = []
    for finding in findings:
        assert finding.fix is not None
        edits = finding.fix.edits()
        lines = {(e.file, e.line) for e in edits if e.action != "add"}
        blocks = {(e.file, e.line) for e in edits if e.action == "add"}
        for changed, added, group in groups:
            if not lines & (changed | added) and not blocks & changed:
                changed |= lines
                added |= blocks
                group.append(finding)
                break
        else:
            groups.append((lines, blocks, [finding]))
    return [group for _, _, group in groups]
