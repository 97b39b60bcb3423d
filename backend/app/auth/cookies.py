"""Names of the auth cookies and header, shared by the router, the deps and the CSRF check."""

SESSION_COOKIE = "nf_session"
CSRF_COOKIE = "nf_csrf"
CSRF_HEADER = "X-CSRF-Token"
SESSION_TOKEN_PREFIX = "nfs_"  # noqa: S105 - a prefix, not a secret
