-- A message the worker records and hands to the outbox provider (every send, fan-out page and
-- workflow step without provider credentials, and every sandbox one) keeps its outbox copy in its
-- own row: one row a delivery instead of a message row and an outbox row. The outbox row was about a
-- third of a fan-out's time on the embedded Postgres (bench/RESULTS.md, 2026-11-25).
--
-- The table `outbox` stays as it was and now holds the copies kept apart (messages that have no
-- message row, such as OTP codes: OutboxProvider.send). It keeps its name so that a process of the
-- release before, still running during a rolling deploy, goes on inserting into it (its
-- `on conflict (id)` needs a table: a view cannot take it). The view `outbox_all` shows every copy:
-- the table's and the messages in the outbox. Clearing the outbox deletes the first and takes the
-- second out of it (in_outbox false, content dropped). The view is for listing (its partial indexes
-- serve it); a look-up per row reads the two halves apart: a correlated look-up into the view is
-- planned as a scan of the view a row.
alter table messages
  add column in_outbox boolean not null default false,
  add column outbox_subject text,
  add column outbox_body text;
create index messages_outbox_team_created on messages (team_id, created_at desc) where in_outbox;
create index messages_outbox_to on messages (md5(to_address)) where in_outbox;
create view outbox_all as
  select id, team_id, channel, to_address, subject, body, trigger_id, created_at from outbox
  union all
  select id, team_id, channel, to_address, outbox_subject, outbox_body, trigger_id, created_at
  from messages where in_outbox;
