/** The host page's Config tab: score, files of the dump with findings at their lines, findings list. */
import { useEffect, useMemo, useRef, useState } from "react";
import { useSearchParams } from "react-router";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { RecommendedChange } from "../../changes/components/RecommendedChange";
import { useAcks } from "../api/acks";
import { isAnalysisPending, useHostConfig } from "../api/config";
import type { ConfigAnalysis, Finding, HostConfig } from "../api/types";
import {
  type FindingFilter,
  type LineMarker,
  SEVERITIES,
  countByFile,
  countBySeverity,
  filterFindings,
  groupByCategory,
  markersForFile,
} from "../utils/findings";
import { isMachineFixable } from "../utils/fix";
import { CodeView } from "./CodeView";
import { FileList } from "./FileList";
import { FindingDetail } from "./FindingDetail";
import { type FindingSelection, FindingList } from "./FindingList";
import { ScoreSummary } from "./ScoreSummary";
import "../config.css";
import "../score.css";

interface ConfigTabProps {
  hostId: number;
  canAcknowledge: boolean;
  /** The host's agent allows applying changes (`apply_allowed`): else the host is read-only. */
  applyAllowed: boolean;
  /** Operators and admins may propose and approve changes; viewers preview them. */
  canPropose: boolean;
}

const NO_FINDINGS: Finding[] = [];

function AnalysisStatus({ config }: { config: HostConfig }) {
  if (isAnalysisPending(config)) {
    return (
      <p className="state state-loading" role="status">
        Analysis pending: the configuration was received and is being scored…
      </p>
    );
  }
  if (config.analysis?.status === "failed") {
    return (
      <ErrorState
        title="The analysis of this configuration failed"
        error={new Error(config.analysis.error ?? "the worker could not analyse this configuration")}
      />
    );
  }
  return null;
}

function ReadOnlyNotice() {
  return (
    <div className="banner banner-info" role="status">
      <strong>Read-only host:</strong> the agent on this host does not allow apply, so no change is offered here.
      Set{" "}
      <code>allow_apply = true</code> in its agent config to get recommended changes.
    </div>
  );
}

/** The bar above the findings list once fixable findings are ticked: fix them in one change. */
function PickedBar({ count, onPreview, onClear }: { count: number; onPreview: () => void; onClear: () => void }) {
  if (count === 0) return null;
  return (
    <div className="picked-bar" role="group" aria-label="findings picked for one change">
      <span>
        {count} finding{count > 1 ? "s" : ""} picked
      </span>
      <button type="button" className="primary small" onClick={onPreview}>
        Preview together
      </button>
      <button type="button" className="small" onClick={onClear}>
        Clear
      </button>
    </div>
  );
}

function ConfigView({
  config,
  hostId,
  canAcknowledge,
  applyAllowed,
  canPropose,
}: { config: HostConfig } & ConfigTabProps) {
  const analysis: ConfigAnalysis | null = config.analysis?.status === "ok" ? config.analysis : null;
  const findings = analysis?.findings ?? NO_FINDINGS;
  const acks = useAcks();
  // A link may name the finding to open (`?finding=KEY`, e.g. from the Traffic tab's banners).
  const [params] = useSearchParams();
  const [linked] = useState(() => findings.find((f) => f.key === params.get("finding")));
  const [filter, setFilter] = useState<FindingFilter>({
    severities: new Set(SEVERITIES),
    showMuted: linked?.muted ?? false,
  });
  const [selectedPath, setSelectedPath] = useState<string | undefined>(linked?.file ?? config.files[0]?.path);
  const [selectedKey, setSelectedKey] = useState<string | undefined>(linked?.key);
  const [selectedLine, setSelectedLine] = useState<number | undefined>(linked?.line);
  // The findings whose recommended change is open, and those ticked to be fixed together.
  const [changeKeys, setChangeKeys] = useState<string[] | null>(null);
  const [picked, setPicked] = useState<ReadonlySet<string>>(new Set());
  const changeRef = useRef<HTMLDivElement>(null);

  const visible = useMemo(() => filterFindings(findings, filter), [findings, filter]);
  const groups = useMemo(() => groupByCategory(visible), [visible]);
  const fileCounts = useMemo(() => countByFile(findings), [findings]);
  const totals = useMemo(() => countBySeverity(findings, filter.showMuted), [findings, filter.showMuted]);
  const file = config.files.find((f) => f.path === selectedPath) ?? config.files[0];
  const markers = useMemo(
    () => (file ? markersForFile(visible, file.path, file.line_count) : new Map<number, LineMarker>()),
    [visible, file],
  );
  const selected = findings.find((f) => f.key === selectedKey);
  const offersChanges = applyAllowed && config.snapshot !== null;
  const changeFindings = useMemo(
    () => (changeKeys ? findings.filter((f) => changeKeys.includes(f.key)) : []),
    [changeKeys, findings],
  );
  const pickedFindings = findings.filter((f) => picked.has(f.key));

  useEffect(() => {
    // jsdom has no layout, hence no scrollIntoView.
    if (changeKeys) changeRef.current?.scrollIntoView?.({ block: "start", behavior: "smooth" });
  }, [changeKeys]);

  const selection: FindingSelection | undefined = offersChanges
    ? {
        keys: picked,
        canSelect: (finding) => !finding.muted && isMachineFixable(finding.fix),
        onToggle: (finding) =>
          setPicked((current) => {
            const next = new Set(current);
            if (next.has(finding.key)) next.delete(finding.key);
            else next.add(finding.key);
            return next;
          }),
      }
    : undefined;

  const selectFinding = (finding: Finding) => {
    setSelectedKey(finding.key);
    setSelectedPath(finding.file);
    setSelectedLine(finding.line);
  };
  const selectFile = (path: string) => {
    setSelectedPath(path);
    setSelectedLine(undefined);
  };

  return (
    <div className="config-tab">
      {analysis ? <ScoreSummary analysis={analysis} /> : null}
      <AnalysisStatus config={config} />
      {analysis && !applyAllowed ? <ReadOnlyNotice /> : null}
      {offersChanges && config.snapshot && changeFindings.length > 0 ? (
        <div ref={changeRef}>
          <RecommendedChange
            key={[...changeFindings.map((f) => f.key)].sort().join("\n")}
            hostId={hostId}
            snapshotId={config.snapshot.id}
            findings={changeFindings}
            canPropose={canPropose}
            onClose={() => setChangeKeys(null)}
          />
        </div>
      ) : null}
      <div className="config-layout">
        <FileList files={config.files} findingCounts={fileCounts} selected={file?.path} onSelect={selectFile} />
        {file ? (
          <CodeView
            file={file}
            markers={markers}
            selectedLine={selectedLine}
            onMarker={(marker) => {
              const first = marker.findings[0];
              if (first) selectFinding(first);
            }}
          />
        ) : (
          <EmptyState>The configuration dump has no files.</EmptyState>
        )}
        {analysis ? (
          <div className="config-side">
            {selected ? (
              <FindingDetail
                key={selected.key}
                finding={selected}
                hostId={hostId}
                ack={acks.data?.find((a) => a.id === selected.ack_id)}
                canAcknowledge={canAcknowledge}
                onRecommend={offersChanges ? () => setChangeKeys([selected.key]) : undefined}
              />
            ) : (
              <p className="muted">Select a finding or a marker in the gutter to see its evidence and fix.</p>
            )}
            <PickedBar
              count={pickedFindings.length}
              onPreview={() => setChangeKeys(pickedFindings.map((f) => f.key))}
              onClear={() => setPicked(new Set())}
            />
            <FindingList
              groups={groups}
              totals={totals}
              categoryScores={analysis.categories}
              filter={filter}
              onFilterChange={setFilter}
              selectedKey={selectedKey}
              onSelect={selectFinding}
              selection={selection}
            />
          </div>
        ) : null}
      </div>
    </div>
  );
}

export default function ConfigTab(props: ConfigTabProps) {
  const { hostId } = props;
  const config = useHostConfig(hostId);
  if (config.isPending) return <Loading what="Loading configuration" />;
  if (config.isError) return <ErrorState error={config.error} title="Could not load the configuration" />;
  if (config.data.snapshot === null) {
    return (
      <EmptyState>
        The agent has not sent its configuration yet. It sends the <code>nginx -T</code> output on its first push and
        whenever the configuration changes.
      </EmptyState>
    );
  }
  return <ConfigView config={config.data} {...props} />;
}
