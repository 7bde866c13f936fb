-- Why a trigger reached no one, when it completed without a message: the contact does not meet the
-- workflow's conditions or is within its cooldown, no contact matches an event, the workflow was
-- deactivated before a scheduled start… Shown on the trigger's views; null otherwise.
alter table triggers add column note text;
