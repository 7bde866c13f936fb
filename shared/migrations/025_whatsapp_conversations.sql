-- WhatsApp is billed per conversation, as the specification says ("Messaging window: 24 hours, billed
-- per conversation category"): the first message of a category to a number opens a 24-hour
-- conversation and is charged; later messages of that category to that number inside it are not.
-- One row per (team, number, category): its latest conversation, taken over by the next message that
-- comes once it has expired. The row is also the lock that lets concurrent delivery passes to one
-- number open exactly one conversation (see shared/sending/conversations.ts). A conversation whose
-- opening message was refunded (the provider refused it) or could not be paid is deleted.
create table whatsapp_conversations (
  team_id uuid not null references teams (id) on delete cascade,
  phone text not null,
  category text not null check (category in ('MARKETING', 'UTILITY', 'AUTHENTICATION')),
  opened_at timestamptz(3) not null,
  expires_at timestamptz(3) not null,
  -- The message charged for the conversation; the wallet ledger's charge names it too.
  opened_by_message_id text not null,
  primary key (team_id, phone, category)
);
