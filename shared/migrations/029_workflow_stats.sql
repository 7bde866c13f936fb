-- Running totals behind a workflow's statistics view (GET /api/v1/workflows/{id}, the dashboard's
-- workflow page). Aggregating every execution and step run on each request (count distinct
-- included) grew with the workflow: about a second at 100,000 executions. The totals are kept by
-- the triggers below, in the very statement that creates or moves an execution, records a step run
-- or records a WhatsApp delivery report, so they commit or roll back with it whichever process or
-- engine wrote it; reading them is a few rows. The statement triggers work once per statement
-- (the worker writes a batch of executions a statement), not once per row.

-- Per workflow: what its executions did.
create table workflow_stats (
  workflow_id uuid primary key references workflows (id) on delete cascade,
  executions bigint not null default 0,
  started bigint not null default 0,
  -- COMPLETED or FAILED.
  processed bigint not null default 0,
  failed bigint not null default 0,
  -- Distinct contacts with an execution, counted when the first is made (an execution made
  -- without a contact counts as one).
  contacts bigint not null default 0,
  first_started_at timestamptz(3),
  last_completed_at timestamptz(3)
);

-- Per workflow and channel: what its step runs did.
create table workflow_channel_stats (
  workflow_id uuid not null references workflows (id) on delete cascade,
  channel_type text not null,
  -- Distinct executions and distinct contacts with a step run on the channel.
  executions bigint not null default 0,
  contacts bigint not null default 0,
  sent bigint not null default 0,
  failed bigint not null default 0,
  -- WhatsApp: step runs whose message was reported delivered, read.
  delivered bigint not null default 0,
  read bigint not null default 0,
  cost_micros bigint not null default 0,
  primary key (workflow_id, channel_type)
);

-- The contacts each workflow reached (scope 'execution'), and on each channel (scope = the
-- channel): what makes the distinct counts exact when a contact is reached again. No foreign key
-- here nor in workflow_due: its check per row cost more than the rest of the bookkeeping; the
-- trigger on workflows below removes a deleted workflow's rows.
create table workflow_reach (
  workflow_id uuid not null,
  scope text not null,
  contact_id uuid not null,
  primary key (workflow_id, scope, contact_id)
);

-- How many running executions are due at each time: the earliest is the view's scheduled_at.
create table workflow_due (
  workflow_id uuid not null,
  due_at timestamptz(3) not null,
  executions bigint not null,
  primary key (workflow_id, due_at)
);

-- A delivery report names the message: this finds its WhatsApp step run.
create index workflow_step_runs_whatsapp_message on workflow_step_runs (message_id)
  where channel_type = 'whatsapp' and message_id is not null;

-- Rows are written in workflow order, so that two statements never wait for each other's rows.
create function workflow_executions_count() returns trigger language plpgsql as $fn$
begin
  if tg_op = 'INSERT' then
    with reached as (
      insert into workflow_reach (workflow_id, scope, contact_id)
      select distinct workflow_id, 'execution', contact_id from new_rows where contact_id is not null
      order by 1, 3
      on conflict do nothing
      returning workflow_id
    ), fresh as (
      select workflow_id, count(*) as n from reached group by workflow_id
    ), made as (
      select workflow_id, count(*) as executions,
        count(*) filter (where started_at is not null) as started,
        count(*) filter (where status in ('COMPLETED', 'FAILED')) as processed,
        count(*) filter (where status = 'FAILED') as failed,
        count(*) filter (where contact_id is null) as anonymous,
        min(started_at) as first_started_at, max(completed_at) as last_completed_at
      from new_rows group by workflow_id
    )
    insert into workflow_stats as s
      (workflow_id, executions, started, processed, failed, contacts, first_started_at, last_completed_at)
    select m.workflow_id, m.executions, m.started, m.processed, m.failed, m.anonymous + coalesce(f.n, 0),
      m.first_started_at, m.last_completed_at
    from made m left join fresh f using (workflow_id)
    order by m.workflow_id
    on conflict (workflow_id) do update set
      executions = s.executions + excluded.executions,
      started = s.started + excluded.started,
      processed = s.processed + excluded.processed,
      failed = s.failed + excluded.failed,
      contacts = s.contacts + excluded.contacts,
      first_started_at = least(s.first_started_at, excluded.first_started_at),
      last_completed_at = greatest(s.last_completed_at, excluded.last_completed_at);

    insert into workflow_due as d (workflow_id, due_at, executions)
    select workflow_id, next_run_at, count(*) from new_rows
    where current_step is not null and next_run_at is not null
    group by workflow_id, next_run_at
    order by workflow_id, next_run_at
    on conflict (workflow_id, due_at) do update set executions = d.executions + excluded.executions;
    return null;
  end if;

  -- An update: what the new rows count less what the old ones did.
  with changed as (
    select workflow_id,
      sum(delta * (started_at is not null)::int) as started,
      sum(delta * (status in ('COMPLETED', 'FAILED'))::int) as processed,
      sum(delta * (status = 'FAILED')::int) as failed,
      min(started_at) filter (where delta = 1) as first_started_at,
      max(completed_at) filter (where delta = 1) as last_completed_at
    from (
      select 1 as delta, workflow_id, started_at, completed_at, status from new_rows
      union all
      select -1, workflow_id, started_at, completed_at, status from old_rows
    ) changes
    group by workflow_id
  )
  update workflow_stats s set
    started = s.started + c.started,
    processed = s.processed + c.processed,
    failed = s.failed + c.failed,
    first_started_at = least(s.first_started_at, c.first_started_at),
    last_completed_at = greatest(s.last_completed_at, c.last_completed_at)
  from (select * from changed order by workflow_id) c
  where s.workflow_id = c.workflow_id
    and (c.started <> 0 or c.processed <> 0 or c.failed <> 0
      or least(s.first_started_at, c.first_started_at) is distinct from s.first_started_at
      or greatest(s.last_completed_at, c.last_completed_at) is distinct from s.last_completed_at);

  insert into workflow_due as d (workflow_id, due_at, executions)
  select workflow_id, due_at, sum(delta)
  from (
    select 1 as delta, workflow_id, next_run_at as due_at from new_rows
    where current_step is not null and next_run_at is not null
    union all
    select -1, workflow_id, next_run_at from old_rows where current_step is not null and next_run_at is not null
  ) changes
  group by workflow_id, due_at
  having sum(delta) <> 0
  order by workflow_id, due_at
  on conflict (workflow_id, due_at) do update set executions = d.executions + excluded.executions;
  -- Only a time some execution left can have none left.
  delete from workflow_due d
  using (select distinct workflow_id, next_run_at from old_rows where current_step is not null) o
  where d.workflow_id = o.workflow_id and d.due_at = o.next_run_at and d.executions <= 0;
  return null;
end
$fn$;

create trigger workflow_executions_counted_insert after insert on workflow_executions
  referencing new table as new_rows for each statement execute function workflow_executions_count();
create trigger workflow_executions_counted_update after update on workflow_executions
  referencing old table as old_rows new table as new_rows for each statement execute function workflow_executions_count();

-- Step runs are only inserted (a step recorded already is left as it is).
create function workflow_step_runs_count() returns trigger language plpgsql as $fn$
begin
  with reached as (
    insert into workflow_reach (workflow_id, scope, contact_id)
    select distinct workflow_id, channel_type, contact_id from new_rows where contact_id is not null
    order by 1, 2, 3
    on conflict do nothing
    returning workflow_id, scope
  ), fresh_contacts as (
    select workflow_id, scope as channel_type, count(*) as n from reached group by 1, 2
  ), by_execution as (
    select workflow_id, channel_type, execution_id, count(*) as runs from new_rows group by 1, 2, 3
  ), fresh_executions as (
    -- Executions with no step run on the channel but the new ones (a step runs once per execution).
    select workflow_id, channel_type, count(*) as n from by_execution b
    where (select count(*) from workflow_step_runs o
      where o.execution_id = b.execution_id and o.channel_type = b.channel_type) = b.runs
    group by 1, 2
  ), reported as (
    -- A report may come before the step run is recorded; the lock makes one of the two count it.
    select id, delivered_at, read_at from messages
    where id in (select message_id from new_rows where channel_type = 'whatsapp' and message_id is not null)
    for share
  ), made as (
    select r.workflow_id, r.channel_type,
      count(*) filter (where r.status = 'SENT') as sent,
      count(*) filter (where r.status = 'FAILED') as failed,
      count(m.delivered_at) as delivered, count(m.read_at) as read,
      coalesce(sum(r.cost_micros), 0) as cost_micros
    from new_rows r left join reported m on r.channel_type = 'whatsapp' and m.id = r.message_id
    group by 1, 2
  )
  insert into workflow_channel_stats as s
    (workflow_id, channel_type, executions, contacts, sent, failed, delivered, read, cost_micros)
  select m.workflow_id, m.channel_type, coalesce(e.n, 0), coalesce(c.n, 0), m.sent, m.failed, m.delivered, m.read,
    m.cost_micros
  from made m
  left join fresh_executions e using (workflow_id, channel_type)
  left join fresh_contacts c using (workflow_id, channel_type)
  order by m.workflow_id, m.channel_type
  on conflict (workflow_id, channel_type) do update set
    executions = s.executions + excluded.executions,
    contacts = s.contacts + excluded.contacts,
    sent = s.sent + excluded.sent,
    failed = s.failed + excluded.failed,
    delivered = s.delivered + excluded.delivered,
    read = s.read + excluded.read,
    cost_micros = s.cost_micros + excluded.cost_micros;
  return null;
end
$fn$;

create trigger workflow_step_runs_counted after insert on workflow_step_runs
  referencing new table as new_rows for each statement execute function workflow_step_runs_count();

-- A WhatsApp message reported delivered or read for the first time: its step run's channel counts it.
create function workflow_whatsapp_report_count() returns trigger language plpgsql as $fn$
begin
  update workflow_channel_stats s set
    delivered = s.delivered + (old.delivered_at is null and new.delivered_at is not null)::int,
    read = s.read + (old.read_at is null and new.read_at is not null)::int
  from workflow_step_runs r
  where r.message_id = new.id and r.channel_type = 'whatsapp'
    and s.workflow_id = r.workflow_id and s.channel_type = 'whatsapp';
  return null;
end
$fn$;

create trigger messages_workflow_whatsapp_report after update on messages
  for each row
  when (new.channel = 'whatsapp' and ((old.delivered_at is null and new.delivered_at is not null)
    or (old.read_at is null and new.read_at is not null)))
  execute function workflow_whatsapp_report_count();

create function workflow_bookkeeping_forget() returns trigger language plpgsql as $fn$
begin
  delete from workflow_reach where workflow_id in (select id from old_rows);
  delete from workflow_due where workflow_id in (select id from old_rows);
  return null;
end
$fn$;

create trigger workflows_bookkeeping_forgotten after delete on workflows
  referencing old table as old_rows for each statement execute function workflow_bookkeeping_forget();

-- What was there before the triggers (they are in place first: the tables stay locked until this
-- migration commits, so no change falls between the two).
insert into workflow_reach (workflow_id, scope, contact_id)
select distinct workflow_id, 'execution', contact_id from workflow_executions where contact_id is not null
union all
select distinct workflow_id, channel_type, contact_id from workflow_step_runs where contact_id is not null;

insert into workflow_stats
  (workflow_id, executions, started, processed, failed, contacts, first_started_at, last_completed_at)
select workflow_id, count(*), count(*) filter (where started_at is not null),
  count(*) filter (where status in ('COMPLETED', 'FAILED')), count(*) filter (where status = 'FAILED'),
  count(distinct contact_id) + count(*) filter (where contact_id is null), min(started_at), max(completed_at)
from workflow_executions group by workflow_id;

insert into workflow_channel_stats
  (workflow_id, channel_type, executions, contacts, sent, failed, delivered, read, cost_micros)
select r.workflow_id, r.channel_type, count(distinct r.execution_id), count(distinct r.contact_id),
  count(*) filter (where r.status = 'SENT'), count(*) filter (where r.status = 'FAILED'),
  count(m.delivered_at), count(m.read_at), coalesce(sum(r.cost_micros), 0)
from workflow_step_runs r
left join messages m on r.channel_type = 'whatsapp' and m.id = r.message_id
group by r.workflow_id, r.channel_type;

insert into workflow_due (workflow_id, due_at, executions)
select workflow_id, next_run_at, count(*) from workflow_executions
where current_step is not null and next_run_at is not null
group by workflow_id, next_run_at;
