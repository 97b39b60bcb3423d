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

KNOWN_WRONG: dict[str, str] = {
    "findings/alpine-default": f"{_EFFECTIVE}; {_SERVES}; {_FACTS}",
    "findings/geoip-shop": _DYNAMIC,
    "findings/chat-mattermost": "speculative cache sizing; websocket location held to pool rules",
    "findings/debian-certbot-sites": f"{_EFFECTIVE}; {_FACTS}",
    "findings/debian-default": f"{_EFFECTIVE}; {_FACTS}",
    "findings/headers-more": _DYNAMIC,
    "findings/image-resizer": _DYNAMIC,
    "findings/lua-gateway": _DYNAMIC,
    "findings/nginx-org-default": _FACTS,
    "findings/rhel-default": _FACTS,
    "findings/legacy-php-portal": _GIXY,
    "findings/letsencrypt-webroot": _FACTS,
    "findings/media-proxy": _GIXY,
    "findings/mail-proxy": f"{_TABLE}; {_SERVES}",
    "findings/nested-http-rejected": _FACTS,
    "findings/nextcloud": _TABLE,
    "findings/socketio-chat": _RECALL,
    "findings/stream-proxy": _SERVES,
    "findings/uwsgi-ssi-dav": _TABLE,
    "findings/video-streaming": _TABLE,
    "facts/debian-default": _EFFECTIVE,
    "facts/headers-more": _DYNAMIC,
    "facts/lua-gateway": _DYNAMIC,
    "facts/mail-proxy": f"{_TABLE}; {_SERVES}",
    "facts/stream-proxy": _SERVES,
    "facts/video-streaming": _TABLE,
    "errors/alpine-default": _EFFECTIVE,
    "errors/debian-certbot-sites": _EFFECTIVE,
    "errors/debian-default": _EFFECTIVE,
    "errors/mail-proxy": _TABLE,
    "errors/nextcloud": _TABLE,
    "errors/uwsgi-ssi-dav": _TABLE,
    "errors/video-streaming": _TABLE,
    **{
        f"site/{name}": _SINGLE
        for name in (
            "alpine-default",
            "caching-proxy",
            "chat-mattermost",
            "compose-proxy",
            "debian-certbot-sites",
            "debian-default",
            "docker-registry",
            "docs-static",
            "geoip-shop",
            "grafana-subpath",
            "h5bp-headers",
            "headers-more",
            "http-level-headers",
            "image-resizer",
            "letsencrypt-webroot",
            "load-balancer",
            "lua-gateway",
            "mail-proxy",
            "multi-tenant-tls",
            "nextcloud",
            "nginx-org-default",
            "node-websocket",
            "php-laravel",
            "rails-puma",
            "rhel-default",
            "socketio-chat",
            "spa-static",
            "sso-auth-request",
            "static-tls-hsts",
            "stream-proxy",
            "uwsgi-ssi-dav",
            "video-streaming",
            "wordpress-microcache",
        )
    },
}
