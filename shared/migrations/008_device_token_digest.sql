-- A push device token may be up to 4,096 characters (DESIGN.md), but a btree row stops at 2,704
-- bytes (a longer random token failed to register or to send): index tokens by their md5 (32
-- characters) instead. Look-ups name both the md5 and the token, so the index finds the row and the
-- text decides; the unique index takes an md5 for its token, and no two tokens of the token alphabet
-- are known to share one.
alter table device_tokens drop constraint device_tokens_contact_id_token_key;
create unique index device_tokens_contact_token on device_tokens (contact_id, md5(token));
drop index device_tokens_team_token;
create index device_tokens_team_token on device_tokens (team_id, md5(token));
