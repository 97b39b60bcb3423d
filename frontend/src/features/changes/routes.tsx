/** The changes pages, loaded when first opened (they carry the diff view's syntax highlighter). */
import { type ReactNode, Suspense, lazy } from "react";
import { Loading } from "../../components/ui/states";

const ChangesPage = lazy(() => import("./components/ChangesPage"));
const ChangeDetailPage = lazy(() => import("./components/ChangeDetailPage"));
const NewRolloutPage = lazy(() => import("./components/RolloutPages").then((m) => ({ default: m.NewRolloutPage })));
const RolloutDetailPage = lazy(() =>
  import("./components/RolloutPages").then((m) => ({ default: m.RolloutDetailPage })),
);

function Page({ children }: { children: ReactNode }) {
  return <Suspense fallback={<Loading what="Loading the page" />}>{children}</Suspense>;
}

export const changesPage = (
  <Page>
    <ChangesPage />
  </Page>
);
export const changeDetailPage = (
  <Page>
    <ChangeDetailPage />
  </Page>
);
export const newRolloutPage = (
  <Page>
    <NewRolloutPage />
  </Page>
);
export const rolloutDetailPage = (
  <Page>
    <RolloutDetailPage />
  </Page>
);
