"""The HTTP layer above core and the domains: FastAPI dependencies that need auth."""
