-- Hot state of ENGINE=postgres (shared/engine/postgres/): what Deno KV holds for one process, here
-- shared by every replica of the same DATABASE_URL. Each row carries `expires_at`, indexed, and the
-- sweep (shared/engine/postgres/sweep.ts) deletes what is past it; reads ignore such rows meanwhile.

-- Fixed-window counters: hits of a subject under a named limit in one window (its length and start in ms).
create table engine_window_counts (
  name text not null,
  subject text not null,
  window_ms bigint not null,
  window_start bigint not null,
  count integer not null,
  expires_at timestamptz(3) not null,
  primary key (name, subject, window_ms, window_start)
);
create index engine_window_counts_expires on engine_window_counts (expires_at);

-- Sliding windows: the times (ms) of a subject's latest hits under a named limit, at most the limit.
create table engine_sliding_windows (
  name text not null,
  subject text not null,
  times bigint[] not null,
  expires_at timestamptz(3) not null,
  primary key (name, subject)
);
create index engine_sliding_windows_expires on engine_sliding_windows (expires_at);

-- Idempotency-Key records: a request in flight, or its answer (status, content type, body).
create table engine_idempotency (
  scope text not null,
  key text not null,
  fingerprint text not null,
  state text not null check (state in ('in_flight', 'done')),
  status integer,
  content_type text,
  body text,
  expires_at timestamptz(3) not null,
  primary key (scope, key)
);
create index engine_idempotency_expires on engine_idempotency (expires_at);

-- Records changed by compare-and-set (OTP sessions). `version` comes from a sequence, so a record
-- deleted and made again never repeats a version a reader holds. `active_until` (ms, the role's
-- clock) places the record among its scope's active ones until then; null: not active.
create sequence engine_record_versions;
create table engine_records (
  kind text not null,
  scope text not null,
  id text not null,
  value jsonb not null,
  version bigint not null,
  active_until bigint,
  expires_at timestamptz(3) not null,
  primary key (kind, scope, id)
);
create index engine_records_active on engine_records (kind, scope, active_until) where active_until is not null;
create index engine_records_expires on engine_records (expires_at);
