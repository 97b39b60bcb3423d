/** The host page's Config tab: score, files of the dump with findings at their lines, findings list. */
import { useMemo, useState } from "react";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
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
import { CodeView } from "./CodeView";
import { FileList } from "./FileList";
import { FindingDetail } from "./FindingDetail";
import { FindingList } from "./FindingList";
import { ScoreSummary } from "./ScoreSummary";
import "../config.css";
import "../score.css";

interface ConfigTabProps {
  hostId: number;
  canAcknowledge: boolean;
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

function ConfigView({ config, hostId, canAcknowledge }: { config: HostConfig } & ConfigTabProps) {
  const analysis: ConfigAnalysis | null = config.analysis?.status === "ok" ? config.analysis : null;
  const findings = analysis?.findings ?? NO_FINDINGS;
  const acks = useAcks();
  const [filter, setFilter] = useState<FindingFilter>({ severities: new Set(SEVERITIES), showMuted: false });
  const [selectedPath, setSelectedPath] = useState<string | undefined>(config.files[0]?.path);
  const [selectedKey, setSelectedKey] = useState<string | undefined>();
  const [selectedLine, setSelectedLine] = useState<number | undefined>();

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
              />
            ) : (
              <p className="muted">Select a finding or a marker in the gutter to see its evidence and fix.</p>
            )}
            <FindingList
              groups={groups}
              totals={totals}
              categoryScores={analysis.categories}
              filter={filter}
              onFilterChange={setFilter}
              selectedKey={selectedKey}
              onSelect={selectFinding}
            />
          </div>
        ) : null}
      </div>
    </div>
  );
}

export default function ConfigTab({ hostId, canAcknowledge }: ConfigTabProps) {
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
  return <ConfigView config={config.data} hostId={hostId} canAcknowledge={canAcknowledge} />;
}
