-- The event a failed webhook delivery carried, so that a person can send it again from the dashboard
-- (the queue job that held it is gone once the attempt ends). Kept for failed attempts only: a
-- delivered event needs no second try, and keeping every event would about double the table.
alter table webhook_attempts add column event jsonb;

-- How a team proves it owns an email domain (the dashboard's senders page). `method` is 'resend'
-- (Resend's domains API: the DNS records it asks for, its verification), 'dns' (a TXT record with
-- `dns_token`, which the service looks up itself) or 'manual' (the operator's PUT /admin/v1/…/domains,
-- and rows from before this column). `verified` stays the one flag the email send checks.
alter table email_domains
  add column method text not null default 'manual' check (method in ('manual', 'resend', 'dns')),
  add column dns_token text,
  add column resend_domain_id text,
  -- The records the owner publishes, as the page lists them (Resend's with its status of each).
  add column records jsonb,
  -- The last check's word: Resend's domain status, or what the TXT look-up found.
  add column status text,
  add column checked_at timestamptz(3),
  add column created_at timestamptz(3) not null default now();
