-- Webhook events waiting to be handed to the queue (shared/event_outbox.ts). An event is written
-- in the transaction of the change it reports (a message sent or failed, a trigger completed) and
-- deleted once its delivery jobs are enqueued, right after that transaction commits. A process that
-- stops in between leaves the row, and the worker's sweep enqueues it later: the event is late, not
-- lost. Only events some active endpoint of the team subscribes to are written.
create table webhook_event_outbox (
  -- The envelope's id (`evt_` + ulid), sent as `webhook-id`: a relayed-again event keeps it.
  id text primary key,
  team_id uuid not null,
  type text not null,
  -- json, not jsonb: the envelope relayed by the sweep keeps the text, key order and all.
  data json not null,
  created_at timestamptz(3) not null
);
create index webhook_event_outbox_created on webhook_event_outbox (created_at);
