/** Server-state and live-update providers around the whole app. */
import { QueryClientProvider, type QueryClient } from "@tanstack/react-query";
import type { ReactNode } from "react";
import type { ApiClient } from "../api/client";
import { ApiProvider } from "../api/context";
import { useMe } from "../features/auth/api/auth";
import { LiveEventsProvider } from "../features/fleet/api/live-events";

/** Live updates run only with a session: the stream answers 401 otherwise. */
function SessionLiveEvents({ children }: { children: ReactNode }) {
  const me = useMe();
  return <LiveEventsProvider enabled={Boolean(me.data)}>{children}</LiveEventsProvider>;
}

interface AppProvidersProps {
  queryClient: QueryClient;
  apiClient: ApiClient;
  children: ReactNode;
}

export function AppProviders({ queryClient, apiClient, children }: AppProvidersProps) {
  return (
    <ApiProvider client={apiClient}>
      <QueryClientProvider client={queryClient}>
        <SessionLiveEvents>{children}</SessionLiveEvents>
      </QueryClientProvider>
    </ApiProvider>
  );
}
