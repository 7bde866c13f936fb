-- The sending pipeline: each accepted send is a trigger with one execution per channel, and each
-- execution records one message per recipient. Runs on PostgreSQL 15 and on PGlite.

-- A trigger is written here by the worker when it takes the send up (the API answers from a KV
-- record before that); counts are final once the trigger is completed or failed.
create table triggers (
  id uuid primary key,
  team_id uuid not null references teams (id) on delete cascade,
  flow_type text not null default 'direct_channel',
  -- email, sms, whatsapp, push (a single-channel send) or multi_channel.
  trigger_type text not null,
  status text not null default 'pending' check (status in ('pending', 'processing', 'completed', 'failed')),
  recipient_type text,
  channels text[] not null default '{}',
  job_id text,
  -- The validated send (shared/sending/spec.ts) the worker delivers from.
  spec jsonb,
  sandbox boolean not null default false,
  total_contacts integer not null default 0,
  sent integer not null default 0,
  failed integer not null default 0,
  filtered integer not null default 0,
  scheduled_for timestamptz(3),
  created_at timestamptz(3) not null default now(),
  started_at timestamptz(3),
  completed_at timestamptz(3)
);
create index triggers_team_created on triggers (team_id, created_at desc, id desc);

-- One channel of a trigger.
create table executions (
  id uuid primary key,
  trigger_id uuid not null references triggers (id) on delete cascade,
  team_id uuid not null references teams (id) on delete cascade,
  channel text not null check (channel in ('email', 'sms', 'whatsapp', 'push')),
  status text not null default 'pending' check (status in ('pending', 'processing', 'completed', 'failed')),
  total_contacts integer not null default 0,
  sent_count integer not null default 0,
  failed_count integer not null default 0,
  filtered_count integer not null default 0,
  created_at timestamptz(3) not null default now(),
  started_at timestamptz(3),
  completed_at timestamptz(3)
);
create index executions_trigger on executions (trigger_id);
create index executions_team_channel on executions (team_id, channel, created_at desc, id desc);

-- One message per (execution, recipient): that key is what makes a redelivered job never send
-- twice. `recipient` is the delivery key (the address of a direct send, the contact id, or contact
-- id and device token for push); `to_address` is where it went. `id` (a ulid) is the message id
-- given to providers and the outbox. No foreign key to contacts: a deleted contact's history is kept.
create table messages (
  id text primary key,
  execution_id uuid not null,
  recipient text not null,
  team_id uuid not null,
  trigger_id uuid not null,
  channel text not null,
  batch_no integer not null default 0,
  to_address text,
  contact_id uuid,
  status text not null check (status in ('pending', 'sent', 'failed', 'filtered')),
  provider text,
  provider_message_id text,
  cost_micros bigint not null default 0,
  error text,
  created_at timestamptz(3) not null default now(),
  sent_at timestamptz(3),
  unique (execution_id, recipient)
);

-- Fan-out pages a team's contacts by id (keyset).
create index contacts_team_id on contacts (team_id, id);
