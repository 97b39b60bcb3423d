"""How long each resolution of metrics is kept (environment-configurable)."""

from __future__ import annotations

from datetime import timedelta
from functools import lru_cache

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class RetentionSettings(BaseSettings):
    """Retention per resolution, in days.

    Minutes are kept 14 days: the host page's longest range (7 d, 30-minute points) reads them,
    and a week can be laid beside the week before; older windows read hours (docs/storage.md)."""

    model_config = SettingsConfigDict(extra="ignore", populate_by_name=True)

    raw_days: float = Field(default=2, gt=0, validation_alias="NGINX_FLEET_RETENTION_RAW_DAYS")
    minute_days: float = Field(default=14, gt=0, validation_alias="NGINX_FLEET_RETENTION_1M_DAYS")
    hour_days: float = Field(default=365, gt=0, validation_alias="NGINX_FLEET_RETENTION_1H_DAYS")

    @property
    def raw(self) -> timedelta:
        """How long raw samples are kept."""
        return timedelta(days=self.raw_days)

    @property
    def minute(self) -> timedelta:
        """How long 1-minute rollups are kept."""
        return timedelta(days=self.minute_days)

    @property
    def hour(self) -> timedelta:
        """How long 1-hour rollups are kept."""
        return timedelta(days=self.hour_days)


@lru_cache
def get_retention() -> RetentionSettings:
    """The process-wide retention settings."""
    return RetentionSettings()
