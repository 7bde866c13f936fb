-- Provider failover (shared/providers/failover.ts, worker/failover_send.ts). `handed_account` names the
-- account a message was last handed to: written before each hand-over with `handed_at`, so that a pass
-- that dies mid-failover is resumed by asking only that account (its log, or the same idempotent
-- request), never by trying another, which could deliver it twice. Once sent, it is the account that
-- sent it. `attempts` lists each hand-over (or skip) as [{account, provider, outcome,
-- provider_message_id?, error?}], for the message's record; null for messages of teams without accounts.
alter table messages add column handed_account text;
alter table messages add column attempts jsonb;
