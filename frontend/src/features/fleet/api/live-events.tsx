/** One app-wide EventSource on /api/v1/events that keeps cached fleet and host data live. */
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { type ReactNode, createContext, useContext, useEffect, useState } from "react";
import type { FleetHost, HostDetail, Series } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";
import { type RefreshGate, createRefreshGate, isLiveAccessLogKey } from "../../access-log/api/live-refresh";
import { analysisKeys } from "../../config/api/keys";
import {
  LIVE_RANGES,
  appendPoint,
  applyFleetHost,
  applyHostDetail,
  parseChangeEvent,
  parseSampleEvent,
} from "./live-cache";

export type LiveStatus = "off" | "connecting" | "live" | "reconnecting";

const EVENTS_URL = "/api/v1/events";
const RETRY_MIN_MS = 2_000;
const RETRY_MAX_MS = 30_000;

const LiveStatusContext = createContext<LiveStatus>("off");

/** Whether live updates are flowing. */
export function useLiveStatus(): LiveStatus {
  return useContext(LiveStatusContext);
}

/** A host pushed a sample: its fleet row, detail and live series take it in place. */
export function onSample(queryClient: QueryClient, data: string, accessLogGate: RefreshGate) {
  const event = parseSampleEvent(data);
  if (!event) return;
  queryClient.setQueriesData<FleetHost[]>({ queryKey: queryKeys.fleet.lists() }, (list) =>
    applyFleetHost(list, event.fleet_host),
  );
  queryClient.setQueryData<HostDetail>(queryKeys.hosts.detail(event.host_id), (detail) =>
    applyHostDetail(detail, event.fleet_host),
  );
  for (const range of LIVE_RANGES) {
    queryClient.setQueryData<Series>(queryKeys.hosts.series(event.host_id, range), (series) =>
      appendPoint(series, event.point, range),
    );
  }
  // Short ranges follow the samples (long ones poll); only the views on screen refetch.
  if (accessLogGate(event.host_id, Date.now())) {
    void queryClient.invalidateQueries({
      queryKey: queryKeys.hosts.accessLogs(event.host_id),
      predicate: (query) => isLiveAccessLogKey(query.queryKey),
    });
  }
}

function onHostChanged(queryClient: QueryClient, data: string) {
  void queryClient.invalidateQueries({ queryKey: queryKeys.fleet.all() });
  try {
    const { host_id: hostId } = JSON.parse(data) as { host_id?: unknown };
    if (typeof hostId === "number") void queryClient.invalidateQueries({ queryKey: queryKeys.hosts.detail(hostId) });
  } catch {
    // A malformed payload still got the fleet refreshed above.
  }
}

/**
 * A change moved (a transition or an agent step): refetch the changes and rollouts shown. Once
 * it is over the host's config may have changed, so its analysis (findings, score) is refetched
 * too, and the fleet's scores.
 */
export function onChangeEvent(queryClient: QueryClient, data: string) {
  void queryClient.invalidateQueries({ queryKey: queryKeys.changes.all() });
  void queryClient.invalidateQueries({ queryKey: queryKeys.rollouts.all() });
  const event = parseChangeEvent(data);
  if (event?.final) {
    void queryClient.invalidateQueries({ queryKey: analysisKeys.config(event.host_id) });
    void queryClient.invalidateQueries({ queryKey: queryKeys.fleet.lists() });
  }
}

/** Connect while `enabled` (a user is logged in); reconnect with backoff when the stream closes. */
export function LiveEventsProvider({ enabled, children }: { enabled: boolean; children: ReactNode }) {
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<LiveStatus>("off");

  useEffect(() => {
    if (!enabled || typeof EventSource === "undefined") return undefined;
    let source: EventSource | null = null;
    let retryTimer: number | undefined;
    let retryMs = RETRY_MIN_MS;
    let hadConnection = false;
    let stopped = false;
    const accessLogGate = createRefreshGate();

    const connect = () => {
      setStatus(hadConnection ? "reconnecting" : "connecting");
      source = new EventSource(EVENTS_URL, { withCredentials: true });
      source.onopen = () => {
        // Events missed while disconnected are gone; refetch so nothing stays out of date.
        if (hadConnection) {
          void queryClient.invalidateQueries({ queryKey: queryKeys.fleet.all() });
          void queryClient.invalidateQueries({ queryKey: queryKeys.changes.all() });
          void queryClient.invalidateQueries({ queryKey: queryKeys.rollouts.all() });
        }
        hadConnection = true;
        retryMs = RETRY_MIN_MS;
        setStatus("live");
      };
      source.onerror = () => {
        if (stopped || !source) return;
        setStatus("reconnecting");
        // CONNECTING means the browser retries by itself; CLOSED (e.g. an HTTP error) means we must.
        if (source.readyState === EventSource.CLOSED) {
          source.close();
          retryTimer = window.setTimeout(connect, retryMs);
          retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
        }
      };
      source.addEventListener("sample", (e) =>
        onSample(queryClient, (e as MessageEvent<string>).data, accessLogGate),
      );
      source.addEventListener("host", (e) => onHostChanged(queryClient, (e as MessageEvent<string>).data));
      source.addEventListener("change", (e) => onChangeEvent(queryClient, (e as MessageEvent<string>).data));
      // The server ends the stream when the session ends (logout elsewhere, user disabled or
      // deleted): stop reconnecting and re-ask who is signed in, which leads to the login page.
      source.addEventListener("session_ended", () => {
        stopped = true;
        source?.close();
        setStatus("off");
        void queryClient.invalidateQueries({ queryKey: queryKeys.me() });
      });
    };

    connect();
    return () => {
      stopped = true;
      window.clearTimeout(retryTimer);
      source?.close();
      setStatus("off");
    };
  }, [enabled, queryClient]);

  return <LiveStatusContext.Provider value={status}>{children}</LiveStatusContext.Provider>;
}
