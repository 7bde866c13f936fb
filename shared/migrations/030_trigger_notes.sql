-- The warnings of a trigger (GET /api/v1/triggers/{id}: the template variables its messages missed,
-- the notes they carry) as counts, a row per delivery pass that recorded such messages, written in
-- that pass's transaction (worker/notes.ts). They were counted from `messages` through a partial
-- index at each read: a send to a tag on a channel with no provider notes every message, so each
-- status read of a fan-out to 1,000,000 contacts counted up to 1,000,000 rows while it ran, and
-- every message paid an index entry for it.
-- During a rolling deploy, passes of the release before record their notes on the messages alone:
-- the trigger's warnings leave those out.
create table trigger_notes (
  trigger_id uuid not null,
  missing_variables text,
  note text,
  n integer not null check (n > 0)
);
create index trigger_notes_trigger on trigger_notes (trigger_id);
insert into trigger_notes (trigger_id, missing_variables, note, n)
  select trigger_id, missing_variables, note, count(*) from messages
  where missing_variables is not null or note is not null
  group by trigger_id, missing_variables, note;
drop index messages_noted_trigger;
