-- The event a failed webhook delivery carried, so that a person can send it again from the dashboard
-- (the queue job that held it is gone once the attempt ends). Kept for failed attempts only: a
-- delivered event needs no second try, and keeping every event would about double the table.
alter table webhook_attempts add column event jsonb;
