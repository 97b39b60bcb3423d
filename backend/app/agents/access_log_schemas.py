"""`samples[].access_log`: the agent's per-interval access-log aggregates (docs/access-log.md).

Validated with the rest of its sample: an invalid object refuses that sample alone, naming the
field (`samples[3].access_log.sites[0].request_time.bins`). Every list, string and count is
bounded so that storing and merging them can neither fail nor grow without limit."""

from __future__ import annotations

import math
import re
from typing import Annotated, Any

from nginx_fleet_analyzer.latency_sketch import ALPHA, MAX_INDEX
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, model_validator

from app.core.types import INT4_MAX

MAX_SITES = 200
MAX_UPSTREAMS = 100
MAX_FILES = 50
MAX_TOP_PATHS = 100
MAX_SKETCH_BINS = 2000
# Per interval: far beyond any real host, and the columns of one sample are 32-bit.
LogCount = Annotated[int, Field(strict=True, ge=0, le=INT4_MAX)]
# 256 TiB in one interval; hour sums of many samples stay far inside a 64-bit column.
ByteCount = Annotated[int, Field(strict=True, ge=0, le=2**48)]
# Seconds summed over one interval's requests of one path (a day of 1e6 req/s is 8.64e10).
Seconds = Annotated[float, Field(strict=True, ge=0, le=1e12, allow_inf_nan=False)]
SiteName = Annotated[str, Field(strict=True, min_length=1, max_length=255)]
FormatName = Annotated[str, Field(strict=True, min_length=1, max_length=255)]
VariableName = Annotated[str, Field(strict=True, pattern=r"^[a-z0-9_]{1,64}$")]
# Canonical integers only, so that no two keys name one bin ("7" and "07", "0" and "-0").
_BIN_KEY = re.compile(r"0|-?[1-9][0-9]{0,3}")


def _check_bins(bins: dict[str, Any]) -> dict[str, Any]:
    """Bin keys are integers within ±MAX_INDEX and counts are bounded non-negative integers."""
    for key, count in bins.items():
        if not _BIN_KEY.fullmatch(key) or abs(int(key)) > MAX_INDEX:
            raise ValueError(f"bin {key!r} must be an integer from -{MAX_INDEX} to {MAX_INDEX}")
        if type(count) is not int or not 0 <= count <= INT4_MAX:
            raise ValueError(f"bin {key!r} must count an integer from 0 to {INT4_MAX}")
    return bins


def _our_alpha(value: float) -> float:
    """Sketches of another accuracy have other bins: merging them would be wrong."""
    if not math.isclose(value, ALPHA, rel_tol=1e-9):
        raise ValueError(
            f"must be {ALPHA}, the sketch accuracy this control plane merges with (got {value})"
        )
    return value


class _LogModel(BaseModel):
    """Base of the access-log models: unknown fields are ignored so newer agents still push."""

    model_config = ConfigDict(extra="ignore")


class LogSketch(_LogModel):
    """A latency sketch: zero values, and counts per logarithmic bin (docs/access-log.md)."""

    zero: LogCount = 0
    bins: Annotated[
        dict[str, Any], Field(max_length=MAX_SKETCH_BINS), AfterValidator(_check_bins)
    ] = Field(default_factory=dict)

    def to_stored(self) -> dict[str, Any] | None:
        """The protocol form to store, or None for a sketch that holds no value."""
        bins = {key: count for key, count in self.bins.items() if count}
        if not self.zero and not bins:
            return None
        return {"zero": self.zero, "bins": bins}


class AccessLogFile(_LogModel):
    """One access-log target of the config and what reading it gave this interval."""

    path: Annotated[str, Field(strict=True, min_length=1, max_length=4096)]
    formats: Annotated[list[FormatName], Field(max_length=32)] = Field(default_factory=list)
    # ok, missing, unreadable or unsupported; a state a newer agent adds counts as not ok.
    state: Annotated[str, Field(strict=True, pattern=r"^[a-z_]{1,32}$")]
    reason: Annotated[str, Field(strict=True, max_length=1024)] | None = None
    lines: LogCount = 0
    unparsed: LogCount = 0
    unparsed_sample: Annotated[str, Field(strict=True, max_length=1024)] | None = None
    unparsed_format: FormatName | None = None
    missing_fields: Annotated[list[VariableName], Field(max_length=32)] = Field(
        default_factory=list
    )
    site_field: VariableName | None = None
    conditional: Annotated[bool, Field(strict=True)] = False


class StatusCounts(_LogModel):
    """Requests by status class, and the codes 499, 500, 502, 503, 504 (also in their class)."""

    class_1xx: LogCount = Field(default=0, alias="1xx")
    class_2xx: LogCount = Field(default=0, alias="2xx")
    class_3xx: LogCount = Field(default=0, alias="3xx")
    class_4xx: LogCount = Field(default=0, alias="4xx")
    class_5xx: LogCount = Field(default=0, alias="5xx")
    code_499: LogCount = Field(default=0, alias="499")
    code_500: LogCount = Field(default=0, alias="500")
    code_502: LogCount = Field(default=0, alias="502")
    code_503: LogCount = Field(default=0, alias="503")
    code_504: LogCount = Field(default=0, alias="504")


class CacheCounts(_LogModel):
    """`$upstream_cache_status` counts by value (`-`, no cache involved, is not counted)."""

    hit: LogCount = Field(default=0, alias="HIT")
    miss: LogCount = Field(default=0, alias="MISS")
    expired: LogCount = Field(default=0, alias="EXPIRED")
    stale: LogCount = Field(default=0, alias="STALE")
    updating: LogCount = Field(default=0, alias="UPDATING")
    revalidated: LogCount = Field(default=0, alias="REVALIDATED")
    bypass: LogCount = Field(default=0, alias="BYPASS")


class SiteStats(_LogModel):
    """One site's figures of the interval; a figure whose variable the format lacks is absent."""

    site: SiteName
    requests: LogCount
    status: StatusCounts | None = None
    bytes_sent: ByteCount | None = None
    get_2xx: LogCount | None = None
    cache: CacheCounts | None = None
    request_time: LogSketch | None = None
    upstream_time: LogSketch | None = None
    upstream_errors: LogCount | None = None


class UpstreamStats(_LogModel):
    """Attempts, failed attempts and attempt times of one upstream address of one site."""

    site: SiteName
    upstream: Annotated[str, Field(strict=True, min_length=1, max_length=255)]
    attempts: LogCount
    errors: LogCount = 0
    response_time: LogSketch | None = None


class TopPath(_LogModel):
    """One of a site's most frequent or slowest paths of the interval (IDs collapsed)."""

    site: SiteName
    path: Annotated[str, Field(strict=True, min_length=1, max_length=1024)]
    requests: LogCount
    time_sum: Seconds = 0.0
    time_max: Seconds = 0.0


def _distinct_sites(sites: list[SiteStats]) -> list[SiteStats]:
    """A site is one entry: two would collide in storage and halve its figures."""
    seen: set[str] = set()
    for item in sites:
        if item.site in seen:
            raise ValueError(f"site {item.site!r} appears more than once")
        seen.add(item.site)
    return sites


def _distinct_upstreams(upstreams: list[UpstreamStats]) -> list[UpstreamStats]:
    """An upstream address of a site is one entry."""
    seen: set[tuple[str, str]] = set()
    for item in upstreams:
        if (item.site, item.upstream) in seen:
            raise ValueError(f"upstream {item.upstream!r} of site {item.site!r} appears twice")
        seen.add((item.site, item.upstream))
    return upstreams


class AccessLog(_LogModel):
    """The access-log aggregates of one sample's interval."""

    alpha: Annotated[float, Field(strict=True, allow_inf_nan=False), AfterValidator(_our_alpha)]
    files: Annotated[list[AccessLogFile], Field(max_length=MAX_FILES)] = Field(default_factory=list)
    sites: Annotated[
        list[SiteStats], Field(max_length=MAX_SITES), AfterValidator(_distinct_sites)
    ] = Field(default_factory=list)
    upstreams: Annotated[
        list[UpstreamStats], Field(max_length=MAX_UPSTREAMS), AfterValidator(_distinct_upstreams)
    ] = Field(default_factory=list)
    top_paths: Annotated[list[TopPath], Field(max_length=MAX_TOP_PATHS)] | None = None

    @model_validator(mode="after")
    def _top_paths_of_known_sites(self) -> AccessLog:
        """Top paths are kept with their site's figures, so their site must be one of sites."""
        sites = {item.site for item in self.sites}
        for index, item in enumerate(self.top_paths or []):
            if item.site not in sites:
                raise ValueError(f"top_paths[{index}].site {item.site!r} is not in sites")
        return self
