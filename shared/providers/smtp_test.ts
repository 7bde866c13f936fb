import assert from "node:assert/strict";
import { startFakeSmtp } from "../../harness/fakes/fake_smtp.ts";
import { createSmtpProvider } from "./smtp.ts";
import { providerErrorOf, randomEmailMessage } from "./provider_testing.ts";
import { failureOutcome } from "./types.ts";

const ACCOUNT = { username: "mailer", password: `pw-${crypto.randomUUID()}` };

Deno.test("smtp provider authenticates and delivers the message, our id in its Message-ID", async () => {
  await using server = startFakeSmtp(ACCOUNT);
  const provider = createSmtpProvider({ host: server.host, port: server.port, ...ACCOUNT });
  const message = randomEmailMessage();

  const result = await provider.send(message);

  assert.equal(server.messages.length, 1);
  const [sent] = server.messages;
  assert.equal(sent.from, "news@example.com");
  assert.deepEqual(sent.to, [message.to]);
  assert.match(sent.data, /^Subject: Hello$/m);
  assert.match(sent.data, /^From: Acme News <news@example\.com>$/m);
  assert.match(sent.data, /Hi there/);
  assert.equal(result.providerMessageId, `<${message.id}@example.com>`);
  assert.ok(server.commands.some((c) => c.startsWith("AUTH ")), "it authenticated");
});

Deno.test("smtp provider: wrong credentials and a 5xx recipient are refused, a 4xx is temporary", async () => {
  const rejected = randomEmailMessage();
  const greylisted = randomEmailMessage();
  const full = randomEmailMessage();
  await using server = startFakeSmtp({
    ...ACCOUNT,
    recipientReplies: {
      [rejected.to]: "550 5.1.1 No such user here",
      [greylisted.to]: "451 4.7.1 Greylisted, try again later",
    },
    dataReplies: { [full.to]: "452 4.3.1 Insufficient system storage" },
  });
  const provider = createSmtpProvider({ host: server.host, port: server.port, ...ACCOUNT });

  const refused = await providerErrorOf(provider.send(rejected));
  assert.equal(failureOutcome(refused), "refused");
  assert.equal(refused.providerCode, "550");
  assert.match(refused.message, /No such user here/);
  assert.equal(failureOutcome(await providerErrorOf(provider.send(greylisted))), "temporary");
  assert.equal(failureOutcome(await providerErrorOf(provider.send(full))), "temporary");

  const intruder = createSmtpProvider({ host: server.host, port: server.port, username: "mailer", password: "nope" });
  const denied = await providerErrorOf(intruder.send(randomEmailMessage()));
  assert.equal(denied.providerCode, "535");
  assert.equal(failureOutcome(denied), "refused");
  assert.equal(server.messages.length, 0);
});

Deno.test("smtp provider: a refused connection is temporary; silence after the message's data is unknown", async () => {
  const closed = startFakeSmtp();
  await closed.close();
  const nowhere = createSmtpProvider({ host: closed.host, port: closed.port });
  assert.equal(failureOutcome(await providerErrorOf(nowhere.send(randomEmailMessage()))), "temporary");

  const held = Promise.withResolvers<void>();
  await using server = startFakeSmtp({ holdAfterData: () => held.promise });
  try {
    const slow = createSmtpProvider({ host: server.host, port: server.port, timeoutMs: 300 });
    const error = await providerErrorOf(slow.send(randomEmailMessage()));
    assert.equal(failureOutcome(error), "unknown");
  } finally {
    held.resolve();
  }
});
