-- Teams, keys, contacts, wallets, templates, sender identities, segments and the outbox.
-- Timestamps are timestamptz(3): the interface promises millisecond precision.

create table teams (
  id uuid primary key default gen_random_uuid(),
  name text not null,
  plan text not null default 'pro' check (plan in ('free', 'pro', 'plus', 'enterprise')),
  created_at timestamptz(3) not null default now()
);

create table api_keys (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  kind text not null check (kind in ('sk_live', 'sk_test', 'pk_live', 'pk_test')),
  -- Only a SHA-256 of the key is kept, with a short visible prefix to recognise it by.
  key_hash text not null unique,
  prefix text not null unique,
  created_at timestamptz(3) not null default now(),
  revoked_at timestamptz(3)
);
create index api_keys_team on api_keys (team_id);

create table contacts (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  external_id text not null,
  email text not null,
  first_name text,
  last_name text,
  tags text[] not null default '{}',
  is_active boolean not null default true,
  is_unsubscribed boolean not null default false,
  unsubscribed_at timestamptz(3),
  custom_fields jsonb not null default '{}',
  metadata jsonb not null default '{}',
  preferences jsonb not null default '{
    "email": {"transactional": true, "promotional": false},
    "sms": {"transactional": true, "promotional": true},
    "whatsapp": {"transactional": true, "promotional": false},
    "push": {"transactional": true, "promotional": false}
  }',
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now()
);
-- Email is unique per team without regard to case; the address is stored as given.
create unique index contacts_team_email on contacts (team_id, lower(email));
create unique index contacts_team_external_id on contacts (team_id, external_id);
create index contacts_tags on contacts using gin (tags);
create index contacts_team_created on contacts (team_id, created_at desc, id desc);

-- A contact may hold several devices; a push send goes to all of them.
create table device_tokens (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  contact_id uuid not null references contacts (id) on delete cascade,
  token text not null,
  platform text not null check (platform in ('android', 'ios', 'web')),
  os_version text,
  app_version text,
  device_model text,
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now(),
  unique (contact_id, token)
);
create index device_tokens_team_token on device_tokens (team_id, token);

-- Money is kept in micro-dollars (1 USD = 1,000,000) so that sums are exact.
create table wallets (
  team_id uuid primary key references teams (id) on delete cascade,
  balance_micros bigint not null default 0 check (balance_micros >= 0),
  currency text not null default 'USD',
  updated_at timestamptz(3) not null default now()
);

create table wallet_ledger (
  id bigint generated always as identity primary key,
  team_id uuid not null references teams (id) on delete cascade,
  kind text not null check (kind in ('topup', 'charge', 'refund')),
  amount_micros bigint not null,
  balance_after_micros bigint not null check (balance_after_micros >= 0),
  reference text,
  description text,
  created_at timestamptz(3) not null default now()
);
create index wallet_ledger_team on wallet_ledger (team_id, id desc);

create table templates (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  channel text not null check (channel in ('email', 'sms', 'whatsapp', 'push')),
  key text not null,
  subject text,
  html text,
  text text,
  title text,
  body text,
  category text check (category in ('MARKETING', 'UTILITY', 'AUTHENTICATION')),
  country_variations jsonb,
  status text not null default 'approved' check (status in ('approved', 'pending', 'rejected')),
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now(),
  unique (team_id, channel, key)
);

create table sender_identities (
  team_id uuid not null references teams (id) on delete cascade,
  channel text not null check (channel in ('email', 'sms', 'whatsapp', 'push')),
  id text not null,
  from_address text not null,
  name text,
  countries text[],
  is_default boolean not null default false,
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now(),
  primary key (team_id, channel, id)
);
create unique index sender_identities_one_default on sender_identities (team_id, channel)
  where is_default;

create table email_domains (
  team_id uuid not null references teams (id) on delete cascade,
  domain text not null,
  verified boolean not null default false,
  updated_at timestamptz(3) not null default now(),
  primary key (team_id, domain)
);

create table segments (
  team_id uuid not null references teams (id) on delete cascade,
  id text not null,
  name text not null,
  filter jsonb not null default '{}',
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now(),
  primary key (team_id, id)
);

-- Every message the outbox provider "sends", for a person or a test to read.
create table outbox (
  id text primary key,
  team_id uuid not null,
  channel text not null,
  to_address text not null,
  subject text,
  body text,
  trigger_id uuid,
  created_at timestamptz(3) not null default now()
);
create index outbox_team_created on outbox (team_id, created_at desc);
create index outbox_to on outbox (to_address);
