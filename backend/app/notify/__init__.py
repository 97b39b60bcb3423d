"""Alert notifications: channels (webhook, Slack, email), deliveries with retries, secrets."""
