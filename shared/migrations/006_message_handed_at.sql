-- When a pending message was handed to a provider that cannot take it twice (Twilio has no
-- idempotency key): set just before the call, cleared when the provider's answer shows it was not
-- sent (a retry is then safe). A pending message found with it set after a crash may have gone out,
-- so it is failed with that reason rather than sent again (worker/handoff.ts).
alter table messages add column handed_at timestamptz(3);
