"""Access-log analytics on the agent: find the logs, tail them, aggregate per interval."""
