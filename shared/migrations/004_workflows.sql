-- Workflows: multi-step, multi-channel sequences started through the API or by named events.
-- Each start (trigger) makes one execution per contact; each execution walks the steps in
-- step_order and records every step it ran. Runs on PostgreSQL 15 and on PGlite.

create table workflows (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  name text not null,
  description text not null default '',
  event_type text not null,
  is_active boolean not null default true,
  -- {tags?: string[], segment_id?: string, cooldown_minutes?: number}: who a start may reach.
  conditions jsonb not null default '{}',
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now()
);
create index workflows_team_created on workflows (team_id, created_at desc, id desc);
create index workflows_team_event on workflows (team_id, event_type);
create index workflows_team_name on workflows (team_id, name);

create table workflow_steps (
  id uuid primary key default gen_random_uuid(),
  workflow_id uuid not null references workflows (id) on delete cascade,
  step_order integer not null check (step_order >= 1),
  channel_type text not null check (channel_type in ('email', 'sms', 'whatsapp')),
  step_name text not null,
  is_active boolean not null default true,
  -- {template_id, delay_minutes, variables?, ...}: kept as given so that clients read back what they wrote.
  configuration jsonb not null,
  created_at timestamptz(3) not null default now(),
  unique (workflow_id, step_order)
);

-- The context of one start, shared by all the executions it made (written by the worker, once).
create table workflow_runs (
  trigger_id uuid not null,
  workflow_id uuid not null references workflows (id) on delete cascade,
  team_id uuid not null references teams (id) on delete cascade,
  source text not null check (source in ('api', 'event')),
  -- Started with a test key: outbox only, never charged.
  sandbox boolean not null default false,
  variables jsonb not null default '{}',
  -- {email?: {...}, sms?: {...}, whatsapp?: {...}}: overrides `variables` on that channel.
  channel_variables jsonb not null default '{}',
  -- {<step_order>: {variables?, delay_minutes?, is_active?}} from the advanced send.
  steps_override jsonb not null default '{}',
  -- The event that started it: {name, data, user_info, source}, or null for an API start.
  event jsonb,
  metadata jsonb not null default '{}',
  -- False while the contacts of a tag or all start are still being paged into executions.
  fanout_done boolean not null default true,
  created_at timestamptz(3) not null default now(),
  primary key (trigger_id, workflow_id)
);
create index workflow_runs_workflow on workflow_runs (workflow_id, created_at desc);

create table workflow_executions (
  id uuid primary key,
  -- No foreign key to teams: the workflow's cascade covers it, and each insert checks one key less.
  team_id uuid not null,
  workflow_id uuid not null references workflows (id) on delete cascade,
  trigger_id uuid not null,
  contact_id uuid references contacts (id) on delete set null,
  source text not null check (source in ('api', 'event')),
  status text not null default 'PENDING'
    check (status in ('PENDING', 'PROCESSING', 'SCHEDULED', 'COMPLETED', 'FAILED')),
  -- The step_order due next (or running); null once finished. A step job acts only on the
  -- executions whose current_step is its step, so a step never runs twice nor is skipped.
  current_step integer,
  -- When the current step is due.
  next_run_at timestamptz(3),
  created_at timestamptz(3) not null default now(),
  started_at timestamptz(3),
  completed_at timestamptz(3),
  updated_at timestamptz(3) not null default now()
-- Room on each page so that status changes (not indexed) are HOT updates.
) with (fillfactor = 80);
-- One execution per contact per start: a redelivered start job creates nothing twice. It also
-- serves every look-up by trigger. Few indexes: each step moves every execution once.
create unique index workflow_executions_start on workflow_executions (trigger_id, workflow_id, contact_id);
create index workflow_executions_workflow on workflow_executions (workflow_id, created_at desc, id desc);

-- What each step did for each execution.
create table workflow_step_runs (
  execution_id uuid not null references workflow_executions (id) on delete cascade,
  step_order integer not null,
  -- Goes with its execution (no foreign key of its own: one key check less per row).
  workflow_id uuid not null,
  contact_id uuid,
  channel_type text not null check (channel_type in ('email', 'sms', 'whatsapp')),
  status text not null check (status in ('SENT', 'FAILED', 'FILTERED')),
  message_id text,
  error text,
  cost_micros bigint not null default 0,
  created_at timestamptz(3) not null default now(),
  primary key (execution_id, step_order)
);
create index workflow_step_runs_workflow on workflow_step_runs (workflow_id, channel_type);

-- When each contact last started each workflow: the atomic claim behind `cooldown_minutes`.
create table workflow_cooldowns (
  workflow_id uuid not null references workflows (id) on delete cascade,
  contact_id uuid not null references contacts (id) on delete cascade,
  last_started_at timestamptz(3) not null,
  primary key (workflow_id, contact_id)
);
