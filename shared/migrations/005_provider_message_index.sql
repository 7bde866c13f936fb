-- Provider callbacks (Twilio status, Resend events) find a message by provider_message_id. The
-- index of 003 covered the outbox's messages too: on a service without providers that is every
-- message, written on every fan-out, though no callback ever names one. Index only the messages a
-- real provider sent (the lookup says provider <> 'outbox' so that it can use this index).
drop index messages_provider_message_id;
create index messages_provider_message_id on messages (provider_message_id)
  where provider_message_id is not null and provider <> 'outbox';
