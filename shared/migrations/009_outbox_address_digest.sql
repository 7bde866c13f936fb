-- The outbox indexed its addresses as text, and a push token over about 2,700 characters (up to
-- 4,096 are valid since 008) overflowed the btree row: its message could not be written. Index the
-- md5 instead; the admin outbox filter names both (`md5(to_address) = md5(x) and to_address = x`).
drop index outbox_to;
create index outbox_to on outbox (md5(to_address));
