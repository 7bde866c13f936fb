-- The service that delivers a push token, derived from its form by the database so that every writer
-- agrees (shared/contacts/device_tokens.ts, pushServiceOf, states the same rule): an APNs device token
-- (64 hex characters) of an iOS device goes to APNs; every other token is an FCM registration token,
-- those of iOS apps that use Firebase included.
alter table device_tokens add column provider text generated always as (
  case when platform = 'ios' and token ~ '^[0-9A-Fa-f]{64}$' then 'apns' else 'fcm' end
) stored;

-- Contact tokens (docs/contact-tokens.md): when set, every publishable-key request about a contact
-- carries X-Contact-Token, HMAC-SHA256 of the contact's external id under this secret.
alter table teams add column contact_token_secret text;
