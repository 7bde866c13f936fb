-- Quiet hours (docs/sending.md): a promotional message due inside its recipient's quiet window is
-- recorded pending, charged, and held until this instant, when a delayed job of its batch sends it.
-- Null for every message that was never held; kept once sent, as the time it was held until.
alter table messages add column held_until timestamptz(3);
-- The messages still held: a pass that comes back at the end of a hold finds those its recipient
-- no longer takes (worker/hold.ts) without reading the execution's other messages.
create index messages_held on messages (execution_id) where status = 'pending' and held_until is not null;
