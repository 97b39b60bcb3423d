/** Notification channels (admin): where alerts go, a test notification each, and what was sent. */
import { useState } from "react";
import { EmptyState, ErrorState, Loading } from "../../../components/ui/states";
import { useAlertChannels, useChannelDeliveries, useDeleteChannel, useTestChannel } from "../api/alerts";
import type { Channel } from "../api/types";
import { channelTarget, testOutcome } from "../utils/channel-form";
import { ChannelForm } from "./ChannelForm";
import { DeliveryTable } from "./DeliveryTable";

function RecentDeliveries({ channelId }: { channelId: number }) {
  const deliveries = useChannelDeliveries(channelId, true);
  if (deliveries.isPending) return <Loading what="Loading deliveries" />;
  if (deliveries.isError) return <ErrorState error={deliveries.error} title="Could not load the deliveries" />;
  if (deliveries.data.length === 0) return <EmptyState>Nothing sent through this channel yet.</EmptyState>;
  return <DeliveryTable deliveries={deliveries.data} label="recent deliveries" showIncidents />;
}

function ChannelCard({ channel }: { channel: Channel }) {
  const test = useTestChannel(channel.id);
  const remove = useDeleteChannel();
  const [editing, setEditing] = useState(false);
  const [showDeliveries, setShowDeliveries] = useState(false);
  const outcome = test.data ? testOutcome(test.data) : null;

  return (
    <article className="card channel-card" aria-label={`channel ${channel.name}`}>
      <header>
        <strong>{channel.name}</strong>
        <span className="kind-tag">{channel.kind}</span>
        {channel.enabled ? null : <span className="muted">disabled</span>}
        <span className="channel-target">{channelTarget(channel)}</span>
        <div className="channel-actions">
          <button type="button" className="small" disabled={test.isPending} onClick={() => test.mutate()}>
            {test.isPending ? "Sending…" : "Send test notification"}
          </button>
          <button type="button" className="small" aria-expanded={editing} onClick={() => setEditing(!editing)}>
            Edit
          </button>
          <button
            type="button"
            className="small danger"
            disabled={remove.isPending}
            onClick={() => {
              if (window.confirm(`Delete the channel "${channel.name}"? Rules stop notifying through it.`)) {
                remove.mutate(channel.id);
              }
            }}
          >
            Delete
          </button>
        </div>
      </header>
      {outcome ? (
        <p
          className={`test-outcome ${outcome.ok ? "test-outcome-ok" : "test-outcome-failed"}`}
          role="status"
          aria-label="test notification outcome"
        >
          Test notification {outcome.text}
        </p>
      ) : null}
      {test.error ? (
        <p className="test-outcome test-outcome-failed" role="alert">
          Could not send a test notification: {test.error.message}
        </p>
      ) : null}
      {remove.error ? <ErrorState error={remove.error} title="Could not delete the channel" /> : null}
      {editing ? <ChannelForm channel={channel} onDone={() => setEditing(false)} /> : null}
      <button
        type="button"
        className="link-button"
        aria-expanded={showDeliveries}
        onClick={() => setShowDeliveries(!showDeliveries)}
      >
        {showDeliveries ? "Hide recent deliveries" : "Show recent deliveries"}
      </button>
      {showDeliveries ? <RecentDeliveries channelId={channel.id} /> : null}
    </article>
  );
}

export function ChannelsTab() {
  const channels = useAlertChannels();
  const [creating, setCreating] = useState(false);
  return (
    <>
      <div className="section-head">
        <h2>Channels</h2>
        {creating ? null : (
          <button type="button" className="small" onClick={() => setCreating(true)}>
            New channel
          </button>
        )}
      </div>
      {creating ? <ChannelForm onDone={() => setCreating(false)} /> : null}
      {channels.isPending ? <Loading what="Loading channels" /> : null}
      {channels.isError ? <ErrorState error={channels.error} title="Could not load the channels" /> : null}
      {channels.data && channels.data.length === 0 ? (
        <EmptyState>No channel yet: alerts show here but notify nobody.</EmptyState>
      ) : null}
      {channels.data && channels.data.length > 0 ? (
        <div className="channel-list">
          {channels.data.map((channel) => (
            <ChannelCard key={channel.id} channel={channel} />
          ))}
        </div>
      ) : null}
    </>
  );
}
