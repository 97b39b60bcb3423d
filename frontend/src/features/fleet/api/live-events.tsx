/**
 * One EventSource per tab on /api/v1/events that keeps cached data live (docs/live-events.md).
 * Fleet scope by default: a `fleet` delta at most once a second refreshes the fleet views. A host
 * page switches the stream to its host (`useLiveHostScope`): that host's samples are patched in.
 */
import { type QueryClient, useQueryClient } from "@tanstack/react-query";
import { type ReactNode, createContext, useContext, useEffect, useRef, useState } from "react";
import type { HostDetail, Series } from "../../../api/types";
import { queryKeys } from "../../../lib/query-keys";
import { type RefreshGate, createRefreshGate, isLiveAccessLogKey } from "../../access-log/api/live-refresh";
import { analysisKeys } from "../../config/api/keys";
import { LIVE_RANGES, appendPoint, applyHostDetail, parseChangeEvent, parseSampleEvent } from "./live-cache";

export type LiveStatus = "off" | "connecting" | "live" | "reconnecting";

const EVENTS_URL = "/api/v1/events";
const RETRY_MIN_MS = 2_000;
const RETRY_MAX_MS = 30_000;
/** The fleet views refetch at most this often, however many hosts push. */
export const FLEET_REFRESH_MS = 2_000;

const LiveStatusContext = createContext<LiveStatus>("off");
const LiveScopeContext = createContext<(hostId: number | null) => void>(() => undefined);

/** Whether live updates are flowing. */
export function useLiveStatus(): LiveStatus {
  return useContext(LiveStatusContext);
}

/** While the calling page is shown, the tab's stream carries this host's samples instead of fleet deltas. */
export function useLiveHostScope(hostId: number) {
  const setScope = useContext(LiveScopeContext);
  useEffect(() => {
    if (!Number.isInteger(hostId) || hostId < 1) return undefined;
    setScope(hostId);
    return () => setScope(null);
  }, [hostId, setScope]);
}

/** Calls that come faster than `minIntervalMs` are merged: the first runs at once, the rest once at the end. */
export interface Throttle {
  call: () => void;
  cancel: () => void;
}

export function createThrottle(run: () => void, minIntervalMs: number): Throttle {
  let lastRun = Number.NEGATIVE_INFINITY;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const fire = () => {
    timer = undefined;
    lastRun = Date.now();
    run();
  };
  return {
    call: () => {
      if (timer !== undefined) return;
      const wait = lastRun + minIntervalMs - Date.now();
      if (wait <= 0) fire();
      else timer = setTimeout(fire, wait);
    },
    cancel: () => {
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * Refetch the fleet views on screen (lists and summary; not the label choices, which pushes do not
 * change). Every delta refreshes them: with server-side sorting by live figures, any host that
 * pushed can move into the page shown.
 */
export function refreshFleet(queryClient: QueryClient) {
  void queryClient.invalidateQueries({
    queryKey: queryKeys.fleet.all(),
    predicate: (query) => query.queryKey[1] !== queryKeys.fleet.labels()[1],
    refetchType: "active",
  });
}

/** A push of the host whose page is open: its detail and live series take it in place. */
export function onSample(queryClient: QueryClient, data: string, accessLogGate: RefreshGate) {
  const event = parseSampleEvent(data);
  if (!event) return;
  queryClient.setQueryData<HostDetail>(queryKeys.hosts.detail(event.host_id), (detail) =>
    applyHostDetail(detail, event),
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

function onHostChanged(queryClient: QueryClient, data: string, fleetRefresh: Throttle) {
  fleetRefresh.call();
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
  const [hostId, setHostId] = useState<number | null>(null);
  // Survives scope switches: the stream of the new scope refetches what the old one did not carry.
  const hadConnection = useRef(false);

  useEffect(() => {
    if (!enabled || typeof EventSource === "undefined") {
      hadConnection.current = false;
      return undefined;
    }
    let source: EventSource | null = null;
    let retryTimer: number | undefined;
    let retryMs = RETRY_MIN_MS;
    let stopped = false;
    const accessLogGate = createRefreshGate();
    const fleetRefresh = createThrottle(() => refreshFleet(queryClient), FLEET_REFRESH_MS);
    const url = hostId === null ? EVENTS_URL : `${EVENTS_URL}?host_id=${hostId}`;

    const connect = () => {
      setStatus(hadConnection.current ? "reconnecting" : "connecting");
      source = new EventSource(url, { withCredentials: true });
      source.onopen = () => {
        // Events missed while disconnected are gone; refetch so nothing stays out of date.
        if (hadConnection.current) {
          void queryClient.invalidateQueries({ queryKey: hostId === null ? queryKeys.fleet.all() : ["hosts", hostId] });
          void queryClient.invalidateQueries({ queryKey: queryKeys.changes.all() });
          void queryClient.invalidateQueries({ queryKey: queryKeys.rollouts.all() });
        }
        hadConnection.current = true;
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
      source.addEventListener("fleet", () => fleetRefresh.call());
      source.addEventListener("sample", (e) =>
        onSample(queryClient, (e as MessageEvent<string>).data, accessLogGate),
      );
      source.addEventListener("host", (e) => onHostChanged(queryClient, (e as MessageEvent<string>).data, fleetRefresh));
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
    // Switching scope closes this stream before the next one opens: one stream per tab.
    return () => {
      stopped = true;
      window.clearTimeout(retryTimer);
      fleetRefresh.cancel();
      source?.close();
      setStatus("off");
    };
  }, [enabled, queryClient, hostId]);

  return (
    <LiveScopeContext.Provider value={setHostId}>
      <LiveStatusContext.Provider value={status}>{children}</LiveStatusContext.Provider>
    </LiveScopeContext.Provider>
  );
}
