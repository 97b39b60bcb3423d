/** Render the real app routes at a path, talking to a test API server. */
import { QueryClientProvider } from "@tanstack/react-query";
import { render } from "@testing-library/react";
import { RouterProvider, createMemoryRouter } from "react-router";
import { createApiClient } from "../api/client";
import { ApiProvider } from "../api/context";
import { createQueryClient } from "../app/query-client";
import { routes } from "../app/router";

export function renderApp(path: string, apiOrigin: string) {
  const queryClient = createQueryClient();
  queryClient.setDefaultOptions({ queries: { retry: false, staleTime: Infinity, refetchInterval: false } });
  const router = createMemoryRouter(routes, { initialEntries: [path] });
  const apiClient = createApiClient({ baseUrl: apiOrigin, getCookies: () => "nf_csrf=test-csrf" });
  const view = render(
    <ApiProvider client={apiClient}>
      <QueryClientProvider client={queryClient}>
        <RouterProvider router={router} />
      </QueryClientProvider>
    </ApiProvider>,
  );
  return { ...view, router, queryClient };
}
