-- Deleting a contact anonymizes its messages (the specification keeps a deleted contact's history
-- "in anonymized form"): they are found by contact, without reading every message of the team.
create index messages_contact on messages (contact_id) where contact_id is not null;
