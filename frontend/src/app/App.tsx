/** The application root. */
import { useState } from "react";
import { RouterProvider } from "react-router";
import { createApiClient } from "../api/client";
import { AppProviders } from "./providers";
import { createQueryClient } from "./query-client";
import { createAppRouter } from "./router";

export function App() {
  const [queryClient] = useState(createQueryClient);
  const [router] = useState(createAppRouter);
  const [apiClient] = useState(() => createApiClient());
  return (
    <AppProviders queryClient={queryClient} apiClient={apiClient}>
      <RouterProvider router={router} />
    </AppProviders>
  );
}
