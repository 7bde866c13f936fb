-- Contact ids in creation order: UUID version 7 (RFC 9562; the first 48 bits are the creation time
-- in ms, the rest random), made by the database for every insert that does not name its id.
-- A fan-out pages a team's contacts in id order (contacts_team_id). With random (v4) ids, each page
-- of 1,000 contacts read about 1,000 heap pages scattered over the whole table, twice (the page's
-- ids, then its contacts): once the table outgrew shared_buffers, most of those reads came from
-- outside them, and a fan-out to 1,000,000 contacts cost more a delivery than one to 100,000.
-- Contacts made together now sit together, in the heap and at the right edge of the id indexes.
-- Existing ids are kept; they are still UUIDs.
create function uuid_v7() returns uuid language sql volatile parallel safe as $$
  select encode(
    set_bit(set_bit(
      overlay(uuid_send(gen_random_uuid())
        placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
        from 1 for 6),
      52, 1), 53, 1),
    'hex')::uuid
$$;
alter table contacts alter column id set default uuid_v7();
