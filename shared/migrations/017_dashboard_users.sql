-- Dashboard users and their sessions. A user belongs to one team and signs in by email alone, so an
-- email names one user across the service (case-insensitively).
create table dashboard_users (
  id uuid primary key default gen_random_uuid(),
  team_id uuid not null references teams (id) on delete cascade,
  email text not null,
  -- An argon2id PHC string: salt and parameters travel with the hash, so they can change later.
  password_hash text not null,
  role text not null check (role in ('owner', 'member')),
  created_at timestamptz(3) not null default now()
);
create unique index dashboard_users_email on dashboard_users (lower(email));
create index dashboard_users_team on dashboard_users (team_id);

-- A session is found by the SHA-256 of its cookie's token: the database never holds the token itself.
create table dashboard_sessions (
  token_hash text primary key,
  user_id uuid not null references dashboard_users (id) on delete cascade,
  -- The synchronizer token every form of the session carries.
  csrf_token text not null,
  user_agent text,
  created_at timestamptz(3) not null default now(),
  last_seen_at timestamptz(3) not null default now(),
  expires_at timestamptz(3) not null
);
create index dashboard_sessions_user on dashboard_sessions (user_id);

-- When a key last authenticated a request (the dashboard's keys page shows it); written when a key is
-- looked up, not on every request.
alter table api_keys add column last_used_at timestamptz(3);
