-- The state of a send while it runs, with ENGINE=postgres (shared/engine/postgres/send_state.ts):
-- what Deno KV keeps as KvU64 sums and markers. Trigger records and dispatch cursors live in
-- engine_records (015). Each row carries `expires_at`, and the hot-state sweep deletes what is past it.

-- The running counts of one execution of a fan-out, added to with `+` by each batch counted.
create table engine_send_counts (
  trigger_id text not null,
  execution_id text not null,
  total bigint not null default 0,
  sent bigint not null default 0,
  failed bigint not null default 0,
  filtered bigint not null default 0,
  batches bigint not null default 0,
  expires_at timestamptz(3) not null,
  primary key (trigger_id, execution_id)
);
create index engine_send_counts_expires on engine_send_counts (expires_at);

-- The batches of a fan-out already counted: a redelivered batch finds its row and counts nothing.
create table engine_send_batches (
  execution_id text not null,
  batch_no integer not null,
  expires_at timestamptz(3) not null,
  primary key (execution_id, batch_no)
);
create index engine_send_batches_expires on engine_send_batches (expires_at);

-- Jobs of a trigger the queue gave up on after its retries: the trigger shows failed.
create table engine_send_given_up (
  trigger_id text not null,
  job_id text not null,
  expires_at timestamptz(3) not null,
  primary key (trigger_id, job_id)
);
create index engine_send_given_up_expires on engine_send_given_up (expires_at);
