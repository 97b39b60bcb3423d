"""Config analysis engine: parse nginx configs, run the tuning rules, score the result.

A pure library (no database, no web framework): callers pass text in and get findings out.
"""

from nginx_fleet_analyzer.loader import parse_auto, parse_dump, parse_path, parse_text
from nginx_fleet_analyzer.model import Comment, ConfigFile, Directive, ParsedConfig, ParseError

__all__ = [
    "Comment",
    "ConfigFile",
    "Directive",
    "ParseError",
    "ParsedConfig",
    "parse_auto",
    "parse_dump",
    "parse_path",
    "parse_text",
]
