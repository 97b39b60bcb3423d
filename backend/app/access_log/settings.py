"""How long each resolution of the access-log figures is kept (environment-configurable).

Per-site rows outnumber samples by the sites per host, and each carries latency sketches, so
they are kept for what the UI reads rather than as long as the samples: 10 s rows for the
15 min and 1 h ranges and the rules' hour (and for a spool replayed within hours), minute rows
for the 6 h and 24 h ranges and the alert windows (up to a day), hour rows for the 7 d range
and longer custom ones. docs/storage.md gives the disk each day of each costs.
"""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class LogRetentionSettings(BaseSettings):
    """Retention of the access-log tables per resolution."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    # The rules' metrics window reads its hour from raw rows (app.access_log.window).
    raw_hours: float = Field(
        default=3, ge=1, validation_alias="NGINX_FLEET_LOG_RETENTION_RAW_HOURS"
    )
    # The 24 h range and the alert rules' windows (up to a day) read minutes beyond the raw
    # rows; a partition (6 h) goes only once wholly past the retention, so a day covers both.
    minute_days: float = Field(
        default=1, ge=1, validation_alias="NGINX_FLEET_LOG_RETENTION_1M_DAYS"
    )
    hour_days: float = Field(default=35, gt=0, validation_alias="NGINX_FLEET_LOG_RETENTION_1H_DAYS")

    @property
    def raw(self) -> timedelta:
        """How long per-sample (10 s) rows are kept."""
        return timedelta(hours=self.raw_hours)

    @property
    def minute(self) -> timedelta:
        """How long 1-minute rollups are kept."""
        return timedelta(days=self.minute_days)

    @property
    def hour(self) -> timedelta:
        """How long 1-hour rollups are kept."""
        return timedelta(days=self.hour_days)


@lru_cache
def get_log_retention() -> LogRetentionSettings:
    """The process-wide access-log retention settings."""
    return LogRetentionSettings()
