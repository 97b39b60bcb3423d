/** Which API client the app talks through (tests hand in one aimed at their own server). */
import { type ReactNode, createContext, useContext } from "react";
import { type ApiClient, createApiClient } from "./client";

const ApiContext = createContext<ApiClient | null>(null);

export function ApiProvider({ client, children }: { client: ApiClient; children: ReactNode }) {
  return <ApiContext.Provider value={client}>{children}</ApiContext.Provider>;
}

let defaultClient: ApiClient | undefined;

/** The client from the nearest ApiProvider, else one for the page's own origin. */
export function useApi(): ApiClient {
  const client = useContext(ApiContext);
  if (client) return client;
  defaultClient ??= createApiClient();
  return defaultClient;
}
