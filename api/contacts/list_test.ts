import assert from "node:assert/strict";
import { dbTest } from "../../shared/testing.ts";
import { type Call, contactsFixture, createdContact } from "./testing.ts";

// deno-lint-ignore no-explicit-any
type Item = any;

/** Every id of the list walked page by page with `starting_after`. */
async function walkCursor(call: Call, query: string, limit: number): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const after: string = cursor ? `&starting_after=${cursor}` : "";
    const res = await call("GET", `?limit=${limit}${query}${after}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    pages++;
    ids.push(...res.body.data.map((c: Item) => c.id));
    assert.equal(res.body.next_cursor, res.body.has_more ? res.body.data.at(-1).id : null);
    cursor = res.body.next_cursor;
  } while (cursor);
  return { ids, pages };
}

/** 250 contacts made in three bulk calls (so created_at both differs and ties). */
async function seed250(call: Call): Promise<Item[]> {
  const made: Item[] = [];
  for (const [from, count] of [[0, 100], [100, 100], [200, 50]]) {
    const contacts = Array.from({ length: count }, (_, i) => ({
      email: `p${String(from + i).padStart(3, "0")}@example.com`,
      external_id: `p-${from + i}`,
      tags: (from + i) % 2 === 0 ? ["even"] : ["odd"],
    }));
    const res = await call("POST", "/bulk", { contacts });
    assert.equal(res.body.summary.created_count, count);
    made.push(...res.body.created);
  }
  return made;
}

function newestFirst(a: Item, b: Item): number {
  if (a.created_at !== b.created_at) return a.created_at < b.created_at ? 1 : -1;
  return a.id < b.id ? 1 : -1;
}

dbTest("GET /contacts walks 250 contacts by cursor with no gap or duplicate, newest first", async () => {
  const { call } = await contactsFixture();
  const made = await seed250(call);
  const expected = [...made].sort(newestFirst).map((c) => c.id);
  for (const limit of [100, 7]) {
    const { ids, pages } = await walkCursor(call, "", limit);
    assert.equal(ids.length, 250);
    assert.equal(new Set(ids).size, 250);
    assert.deepEqual(ids, expected);
    assert.equal(pages, Math.ceil(250 / limit));
  }
  const even = await walkCursor(call, "&tag=even", 40);
  assert.deepEqual(even.ids, made.filter((c) => c.tags[0] === "even").sort(newestFirst).map((c) => c.id));
});

dbTest("GET /contacts?page= walks 250 contacts by page with totals, no gap or duplicate", async () => {
  const { call } = await contactsFixture();
  const made = await seed250(call);
  const seen: string[] = [];
  for (let page = 1; page <= 9; page++) {
    const res = await call("GET", `?page=${page}&limit=30&sort_by=email&sort_order=ASC`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.pagination, { page, limit: 30, total: 250, totalPages: 9 });
    assert.equal(res.body.has_more, page < 9);
    assert.equal(res.body.next_cursor, page < 9 ? res.body.data.at(-1).id : null);
    assert.equal(res.body.data.length, page < 9 ? 30 : 10);
    seen.push(...res.body.data.map((c: Item) => c.email));
  }
  const emails = made.map((c) => c.email).sort();
  assert.deepEqual(seen, emails);
  const past = await call("GET", "?page=10&limit=30");
  assert.deepEqual(past.body.data, []);
  assert.equal(past.body.has_more, false);
  const byCreated = await call("GET", "?page=1&limit=100&sort_by=created_at&sort_order=desc");
  assert.deepEqual(
    byCreated.body.data.map((c: Item) => c.id),
    [...made].sort(newestFirst).slice(0, 100).map((c) => c.id),
  );
});

dbTest("GET /contacts defaults to 10 newest items carrying only the list fields", async () => {
  const { call } = await contactsFixture();
  for (let i = 0; i < 12; i++) await createdContact(call, { tags: ["t"] });
  const res = await call("GET", "");
  assert.equal(res.status, 200);
  assert.equal(res.body.data.length, 10);
  assert.equal(res.body.has_more, true);
  assert.equal(res.body.pagination, undefined);
  assert.deepEqual(Object.keys(res.body.data[0]).sort(), [
    "created_at",
    "email",
    "external_id",
    "first_name",
    "id",
    "is_active",
    "last_name",
    "tags",
  ]);
});

dbTest("GET /contacts filters by tag, tags (all of them), is_active, search, email and creation time", async () => {
  const { call } = await contactsFixture();
  const a = await createdContact(call, { tags: ["red", "big"], first_name: "Marie", email: "marie@curie.org" });
  const b = await createdContact(call, { tags: ["red"], last_name: "Noether", is_active: false });
  const c = await createdContact(call, { tags: ["big"], external_id: "CRM-Emmy-9" });
  const ids = async (query: string) => {
    const res = await call("GET", `?limit=100&${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data.map((x: Item) => x.id).sort();
  };
  const sorted = (...xs: Item[]) => xs.map((x) => x.id).sort();
  assert.deepEqual(await ids("tag=red"), sorted(a, b));
  assert.deepEqual(await ids("tags=red,big"), sorted(a));
  assert.deepEqual(await ids("tags=big"), sorted(a, c));
  assert.deepEqual(await ids("tag=red&tag=big"), sorted(a));
  assert.deepEqual(await ids("is_active=false"), sorted(b));
  assert.deepEqual(await ids("is_active=true"), sorted(a, c));
  assert.deepEqual(await ids("search=MARIE"), sorted(a));
  assert.deepEqual(await ids("search=noeth"), sorted(b));
  assert.deepEqual(await ids("search=emmy"), sorted(c));
  assert.deepEqual(await ids("search=CURIE.ORG"), sorted(a));
  assert.deepEqual(await ids("search=%25"), []);
  assert.deepEqual(await ids("email=MARIE@curie.org"), sorted(a));
  assert.deepEqual(await ids(`created_after=${encodeURIComponent(a.created_at)}`), sorted(b, c));
  assert.deepEqual(await ids(`created_before=${encodeURIComponent(b.created_at)}`), sorted(a));
  assert.deepEqual(await ids("tags=big&page=1&search=emmy"), sorted(c));
});

dbTest("GET /contacts with invalid query parameters is 400", async () => {
  const { call } = await contactsFixture();
  const cases: [string, string][] = [
    ["limit=0", "limit must not be less than 1"],
    ["limit=101", "limit must not be greater than 100"],
    ["limit=ten", "limit must be a number"],
    ["is_active=maybe", "is_active must be one of: true, false"],
    ["starting_after=not-a-uuid", "starting_after must be a UUID"],
    ["created_after=yesterday", "created_after must be an ISO 8601 date string"],
    ["created_after=2026-02-30T00:00:00Z", "created_after must be an ISO 8601 date string"],
    ["page=0", "page must not be less than 1"],
    ["page=1&sort_by=password", "sort_by must be one of: created_at, updated_at, email, first_name, last_name"],
    ["page=1&sort_order=UP", "sort_order must be one of: ASC, DESC, asc, desc"],
    [`starting_after=${crypto.randomUUID()}`, "starting_after must be the id of one of your contacts"],
  ];
  for (const [query, message] of cases) {
    const res = await call("GET", `?${query}`);
    assert.equal(res.status, 400, query);
    assert.deepEqual(res.body.message, [message], query);
  }
});

dbTest("GET /contacts filters by is_unsubscribed, in both modes", async () => {
  const { call } = await contactsFixture();
  const stays = await createdContact(call);
  const leaves = await createdContact(call);
  await call("POST", `/${leaves.id}/unsubscribe`);
  for (const mode of ["", "&page=1"]) {
    const ids = async (value: string) =>
      (await call("GET", `?limit=100&is_unsubscribed=${value}${mode}`)).body.data.map((x: Item) => x.id);
    assert.deepEqual(await ids("true"), [leaves.id]);
    assert.deepEqual(await ids("false"), [stays.id]);
  }
  assert.equal((await call("GET", "?is_unsubscribed=maybe")).status, 400);
});
