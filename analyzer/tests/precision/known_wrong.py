"""Where today's engine disagrees with the expert expectation: the one list the integrator shrinks.

Keys are "<test kind>/<config>": "findings" (exact errors and warnings), "facts" (the same with
the host facts of [with_facts]), "errors" (no false error on an accepted config), "site" (the
site file analysed alone). Values name the cause
class, as in DISAGREEMENTS.md. Each entry is a strict xfail, so a fix that makes a config agree
fails the suite until its entry is removed.
"""

_TABLE = "directive table incomplete (standard module directives unknown or in the wrong context)"
_DYNAMIC = "directives of a module loaded with load_module reported as unknown"
_FACTS = "facts-dependent rule above info without host facts"
_EFFECTIVE = "judged by lines, not by the effective value a TLS server or location runs with"
_SERVES = "a server that serves no text (returns, internal proxy) treated as serving text"
_GIXY = "security-linter classes not implemented yet"
_RECALL = "a real problem the engine does not see"
_SINGLE = "a site file alone is parsed at main level; its includes are errors, not notes"

KNOWN_WRONG: dict[str, str] = {}
