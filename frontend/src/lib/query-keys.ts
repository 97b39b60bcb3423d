/** Query-key factories: one place that knows how server state is cached. */
import type { TimeRange } from "../api/types";

export const queryKeys = {
  me: () => ["auth", "me"] as const,
  fleet: {
    all: () => ["fleet"] as const,
    lists: () => ["fleet", "list"] as const,
    /** Label order does not change the result, so it does not change the key either. */
    list: (labels: readonly string[]) => ["fleet", "list", { labels: [...labels].sort() }] as const,
    labels: () => ["fleet", "labels"] as const,
  },
  hosts: {
    all: () => ["hosts"] as const,
    detail: (hostId: number) => ["hosts", hostId] as const,
    series: (hostId: number, range: TimeRange) => ["hosts", hostId, "series", range] as const,
  },
  users: {
    all: () => ["users"] as const,
  },
  enrollmentTokens: {
    all: () => ["enrollment-tokens"] as const,
  },
  audit: {
    all: () => ["audit"] as const,
    list: (limit: number) => ["audit", { limit }] as const,
  },
};
