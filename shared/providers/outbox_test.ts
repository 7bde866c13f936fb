import assert from "node:assert/strict";
import { ulid } from "ulid";
import { dbTest, testDeps, testTeam } from "../testing.ts";
import { OutboxProvider } from "./outbox.ts";
import type { OutboundMessage } from "./types.ts";

dbTest("OutboxProvider.send() records every message once, any text kept as it was given", async () => {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const triggerId = crypto.randomUUID();
  const texts = ['a "quoted", {braced} text', "back\\slash and NULL", "ünïcödé ✓ 😀", "", "line\nbreak\ttab"];
  const messages: OutboundMessage[] = [
    ...texts.map((text, i): OutboundMessage => ({
      id: ulid(),
      teamId: team.id,
      channel: "email",
      to: `r${i}@example.com`,
      subject: `S ${text}`,
      html: `<p>${text}</p>`,
      triggerId,
    })),
    { id: ulid(), teamId: team.id, channel: "push", to: "t".repeat(40), title: "T", text: "B", triggerId },
    { id: ulid(), teamId: team.id, channel: "sms", to: "+14155550123", text: "No subject" },
  ];
  const outbox = new OutboxProvider(deps.sql);
  const results = [];
  for (const m of messages) results.push(await outbox.send(m));
  assert.deepEqual(results, messages.map((m) => ({ providerMessageId: `outbox_${m.id}` })));
  // Recording the same messages again changes nothing.
  for (const m of messages) await outbox.send(m);
  const rows = await deps.sql<
    {
      id: string;
      channel: string;
      to_address: string;
      subject: string | null;
      body: string | null;
      trigger_id: string | null;
    }[]
  >`
    select id, channel, to_address, subject, body, trigger_id from outbox_all where team_id = ${team.id} order by id`;
  assert.deepEqual(
    rows.map((r) => ({ ...r })),
    [
      ...texts.map((text, i) => ({
        id: messages[i].id,
        channel: "email",
        to_address: `r${i}@example.com`,
        subject: `S ${text}`,
        body: `<p>${text}</p>`,
        trigger_id: triggerId,
      })),
      {
        id: messages[5].id,
        channel: "push",
        to_address: "t".repeat(40),
        subject: "T",
        body: "B",
        trigger_id: triggerId,
      },
      {
        id: messages[6].id,
        channel: "sms",
        to_address: "+14155550123",
        subject: null,
        body: "No subject",
        trigger_id: null,
      },
    ].sort((a, b) => a.id < b.id ? -1 : 1),
  );
});
