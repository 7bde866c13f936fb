-- A search by part of a name, email or external id (the dashboard's contacts page, GET /v1/contacts
-- with search=) read every contact of the team: about 1 s at p95 with 100,000 contacts. A trigram
-- index on the four fields joined lets ILIKE '%x%' find the few matching rows instead; the query in
-- shared/contacts/list.ts (contactSearchText) must stay exactly this expression for the index to
-- serve it. The fields are joined by a newline, so that a term matches within one field as before.
-- On PGlite the extension is loaded at start (shared/db.ts).
--
-- The extension goes to public, not to the first schema of the search path: a schema of its own (a
-- test's) would take it along when dropped. Where pg_trgm was installed elsewhere already, its
-- operator class is named in that schema.
create extension if not exists pg_trgm schema public;
do $do$
declare
  trgm_schema text;
begin
  select n.nspname into trgm_schema
  from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'pg_trgm';
  execute format($sql$
    create index contacts_search_trgm on contacts using gin (
      (coalesce(first_name, '') || e'\n' || coalesce(last_name, '') || e'\n' || coalesce(email, '') || e'\n' ||
        coalesce(external_id, '')) %I.gin_trgm_ops
    )$sql$, trgm_schema);
end
$do$;
