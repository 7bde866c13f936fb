import assert from "node:assert/strict";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import {
  closeConversations,
  CONVERSATION_MS,
  type ConversationCategory,
  type ConversationMessage,
  openConversations,
} from "./conversations.ts";
import { newUlid } from "./ids.ts";

const T0 = Date.parse("2026-03-01T12:00:00.000Z");

function message(teamId: string, phone: string, category: ConversationCategory = "UTILITY"): ConversationMessage {
  return { team_id: teamId, phone, category, message_id: newUlid() };
}

dbTest("openConversations() charges the first message of a category to a number for 24 hours", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const open = async (m: ConversationMessage, now: number) =>
    (await openConversations(deps.sql, [m], now)).get(m.message_id);
  const first = message(team.id, "+447700900201");
  assert.equal(await open(first, T0), first.message_id, "the first message opens the conversation");
  const inside = message(team.id, "+447700900201");
  assert.equal(await open(inside, T0 + CONVERSATION_MS - 1), first.message_id, "inside the window: free");
  const marketing = message(team.id, "+447700900201", "MARKETING");
  assert.equal(await open(marketing, T0 + 1), marketing.message_id, "another category opens its own");
  const elsewhere = message(team.id, "+447700900202");
  assert.equal(await open(elsewhere, T0 + 1), elsewhere.message_id, "another number opens its own");
  const other = await testTeam(deps);
  const otherTeam = message(other.team.id, "+447700900201");
  assert.equal(await open(otherTeam, T0 + 1), otherTeam.message_id, "another team opens its own");
  const after = message(team.id, "+447700900201");
  assert.equal(await open(after, T0 + CONVERSATION_MS), after.message_id, "24 hours on, a new conversation");
  const [row] = await deps.sql`select opened_at, expires_at, opened_by_message_id from whatsapp_conversations
    where team_id = ${team.id} and phone = '+447700900201' and category = 'UTILITY'`;
  assert.deepEqual(row, {
    opened_at: new Date(T0 + CONVERSATION_MS),
    expires_at: new Date(T0 + 2 * CONVERSATION_MS),
    opened_by_message_id: after.message_id,
  });
});

dbTest("openConversations() opens the conversation of a message held for quiet hours when the hold ends", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const holdEnds = T0 + 8 * 60 * 60 * 1000;
  const held = { ...message(team.id, "+447700900203", "MARKETING"), at: holdEnds };
  assert.equal((await openConversations(deps.sql, [held], T0)).get(held.message_id), held.message_id);
  const [row] = await deps.sql`select opened_at, expires_at from whatsapp_conversations
    where team_id = ${team.id} and phone = '+447700900203'`;
  assert.deepEqual(row, { opened_at: new Date(holdEnds), expires_at: new Date(holdEnds + CONVERSATION_MS) });
  // A day after it was recorded, but inside the day after it went out: still free.
  const next = message(team.id, "+447700900203", "MARKETING");
  const inside = await openConversations(deps.sql, [next], T0 + CONVERSATION_MS + 60_000);
  assert.equal(inside.get(next.message_id), held.message_id);
});

dbTest("openConversations() lets the first of several messages of a batch to one number open it", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const batch = [
    message(team.id, "+447700900211"),
    message(team.id, "+447700900212"),
    message(team.id, "+447700900211"),
    message(team.id, "+447700900211", "AUTHENTICATION"),
  ];
  const openers = await openConversations(deps.sql, batch, T0);
  assert.deepEqual(batch.map((m) => openers.get(m.message_id)), [
    batch[0].message_id,
    batch[1].message_id,
    batch[0].message_id,
    batch[3].message_id,
  ]);
});

dbTest("openConversations() in concurrent transactions opens exactly one conversation per number", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const phones = ["+447700900221", "+447700900222", "+447700900223"];
  // Ten passes, each with a message to every number, in an order of its own (no deadlock either).
  const passes = Array.from({ length: 10 }, (_, i) => {
    const order = i % 2 === 0 ? phones : phones.toReversed();
    return order.map((phone) => message(team.id, phone));
  });
  const answers = await Promise.all(
    passes.map((pass) => deps.sql.begin((tx) => openConversations(tx, pass, T0))),
  );
  for (const phone of phones) {
    const sent = passes.map((pass) => pass.find((m) => m.phone === phone)!);
    const openers = new Set(sent.map((m, i) => answers[i].get(m.message_id)));
    assert.equal(openers.size, 1, `every pass sees the one conversation to ${phone}`);
    const [opener] = openers;
    assert.equal(sent.filter((m) => m.message_id === opener).length, 1, "opened by one of the messages");
  }
  const [{ n }] = await deps.sql`select count(*)::int as n from whatsapp_conversations where team_id = ${team.id}`;
  assert.equal(n, phones.length);
});

dbTest("closeConversations() closes only a conversation its message opened", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const refused = message(team.id, "+447700900231");
  const kept = message(team.id, "+447700900232");
  await openConversations(deps.sql, [refused, kept], T0);
  const rider = message(team.id, "+447700900232");
  await closeConversations(deps.sql, [refused, rider]);
  const next = message(team.id, "+447700900231");
  const again = message(team.id, "+447700900232");
  const openers = await openConversations(deps.sql, [next, again], T0 + 1);
  assert.equal(openers.get(next.message_id), next.message_id, "the refused opener's conversation is gone");
  assert.equal(openers.get(again.message_id), kept.message_id, "a message that did not open it closes nothing");
});

dbTest("closeConversations() finds the conversation a message opened without its category", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const held = message(team.id, "+447700900241", "MARKETING");
  const other = message(team.id, "+447700900241", "UTILITY");
  await openConversations(deps.sql, [held, other], T0);
  await closeConversations(deps.sql, [{ team_id: team.id, phone: held.phone, message_id: held.message_id }]);
  const rows = await deps.sql`select category from whatsapp_conversations where team_id = ${team.id}`;
  assert.deepEqual(rows.map((r) => r.category), ["UTILITY"], "only the one it opened is closed");
});
