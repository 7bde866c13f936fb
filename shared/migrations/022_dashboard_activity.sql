-- The dashboard's activity log pages a team's messages newest first by keyset on (created_at, id):
-- without this index every page, the first included, sorts all of the team's messages.
create index messages_team_created on messages (team_id, created_at desc, id desc);
-- Failures are what the log is most often filtered for, and few: without this, finding the last
-- failures of a team that rarely fails reads its whole index. Only failed messages are in it.
create index messages_team_failed on messages (team_id, created_at desc, id desc) where status = 'failed';

-- The template a message was made from (its send's template_key, or a push template), so that the
-- activity log can filter by it: a single send's request is not kept once it is done. Null for raw
-- content and for messages recorded before this column.
alter table messages add column template_key text;

-- A CSV import of contacts from the dashboard: one row per upload, holding the file until it is done.
-- Rows are taken in chunks; each chunk's contacts and the import's progress (`next_row`, the report)
-- commit in one transaction, so an import stopped halfway resumes at the first row not yet committed
-- and never creates a contact twice. `heartbeat_at` shows which imports are being worked on: one not
-- touched for a while is taken up again by whoever looks at it next.
create table contact_imports (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  user_id uuid references dashboard_users (id) on delete set null,
  file_name text not null,
  csv text not null,
  status text not null default 'running' check (status in ('running', 'done', 'failed')),
  total_rows integer not null,
  -- The 0-based index of the first data row not yet processed.
  next_row integer not null default 0,
  created_count integer not null default 0,
  -- Rows skipped, in order: [{row, email, reason}], row numbered as in the file (header is row 1).
  skipped jsonb not null default '[]',
  error text,
  created_at timestamptz(3) not null default now(),
  heartbeat_at timestamptz(3) not null default now(),
  finished_at timestamptz(3)
);
create index contact_imports_team on contact_imports (team_id, created_at desc);
