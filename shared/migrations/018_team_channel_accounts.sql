-- A team's own provider accounts per channel (PUT /admin/v1/teams/{team_id}/channel-accounts/{channel}),
-- tried in priority order before the service's default provider. The credentials are kept only
-- encrypted (AES-256-GCM under CHANNEL_ACCOUNTS_KEY, shared/secret_box.ts); `masked` is what GET shows,
-- so that reading the list needs neither the key nor the secrets.
create table team_channel_accounts (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  channel text not null,
  priority int not null,
  provider text not null,
  base_url text,
  -- The same on every row of a team's channel: may a message whose hand-over timed out go to the next?
  failover_on_timeout boolean not null default false,
  masked jsonb not null,
  credentials_ciphertext bytea not null,
  credentials_iv bytea not null,
  created_at timestamptz(3) not null default now(),
  updated_at timestamptz(3) not null default now(),
  unique (team_id, channel, priority)
);
