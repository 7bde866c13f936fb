-- Outbound webhook endpoints and every delivery attempt; the phone index the SMS opt-out callback uses.

create table webhook_endpoints (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  url text not null,
  -- Event types the endpoint receives; null means every type (including types added later).
  events text[],
  secret text not null,
  -- The secret before the last rotation, still used to sign (beside the new one) until it expires.
  previous_secret text,
  previous_secret_expires_at timestamptz(3),
  is_active boolean not null default true,
  -- Why the service disabled the endpoint ('gone': it answered 410).
  disabled_reason text,
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now()
);
create index webhook_endpoints_team on webhook_endpoints (team_id, created_at desc, id desc);

create table webhook_attempts (
  -- ulid: sorts by time.
  id text primary key,
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  team_id uuid not null,
  -- The event's id, sent as `webhook-id`: the same on every attempt, so receivers can deduplicate.
  event_id text not null,
  event_type text not null,
  attempt integer not null,
  status text not null check (status in ('succeeded', 'failed')),
  response_status integer,
  error text,
  latency_ms integer not null,
  next_retry_at timestamptz(3),
  created_at timestamptz(3) not null default now()
);
create index webhook_attempts_endpoint on webhook_attempts (endpoint_id, id desc);
create index webhook_attempts_event on webhook_attempts (event_id, endpoint_id) where status = 'succeeded';

-- Inbound SMS (STOP/START) finds the team's contacts by phone: custom_fields.phone, digits only.
create index contacts_team_phone_digits on contacts (team_id, (regexp_replace(custom_fields ->> 'phone', '[^0-9]', '', 'g')))
  where custom_fields ? 'phone';

-- Provider delivery reports (Twilio status callbacks, Resend events) on the messages of 002. They
-- are kept beside `status` (sent/failed as the pipeline counted them) so the counts never change
-- after the fact: delivery_status is what the provider reported later; delivered_at and read_at
-- feed the WhatsApp delivered/read statistics.
alter table messages
  add column delivery_status text check (delivery_status in ('delivered', 'read', 'failed', 'complained')),
  add column delivered_at timestamptz(3),
  add column read_at timestamptz(3);
create index messages_provider_message_id on messages (provider_message_id) where provider_message_id is not null;
