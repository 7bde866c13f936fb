-- What a sender should know of a message that was sent anyway:
-- `missing_variables`: the template's `{{name}}`s that had no value and rendered empty, comma-separated
--   (names are [A-Za-z0-9_.-], never a comma); null when every one had a value.
-- `note`: why a live message is not what it seems, e.g. kept in the outbox, and not charged, because
--   no provider is configured for its channel; null otherwise.
-- The trigger views read them per trigger through the partial index: only such messages are in it.
alter table messages
  add column missing_variables text,
  add column note text;
create index messages_noted_trigger on messages (trigger_id) where missing_variables is not null or note is not null;
