"""Access-log analytics: cache hit ratio, status codes and latency per host and site."""
