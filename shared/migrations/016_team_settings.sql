-- What a team set through PATCH /admin/v1/teams/{team_id}/settings (only the fields it set: the
-- defaults stay in code, so a changed default reaches every team that did not choose otherwise).
create table team_settings (
  team_id uuid primary key references teams (id) on delete cascade,
  settings jsonb not null default '{}',
  updated_at timestamptz(3) not null default now()
);
