import assert from "node:assert/strict";
import { startFakeVonage } from "../../harness/fakes/fake_vonage.ts";
import { providerErrorOf, randomSmsMessage } from "./provider_testing.ts";
import { failureOutcome } from "./types.ts";
import { createVonageProvider } from "./vonage.ts";

function randomCredentials() {
  return { apiKey: crypto.randomUUID().slice(0, 8), apiSecret: crypto.randomUUID().replaceAll("-", "").slice(0, 16) };
}

Deno.test("vonage provider sends an sms with basic auth and answers Vonage's message id", async () => {
  const credentials = randomCredentials();
  await using server = startFakeVonage(credentials);
  const provider = createVonageProvider({ ...credentials, baseUrl: server.url });
  const message = randomSmsMessage();

  const result = await provider.send(message);

  assert.equal(server.messages.length, 1);
  const [sent] = server.messages;
  assert.deepEqual(sent, {
    messageId: result.providerMessageId,
    to: message.to.slice(1),
    from: message.from!.slice(1),
    text: message.text,
    clientRef: message.id,
  });
  assert.equal(
    server.requests[0].headers.get("authorization"),
    `Basic ${btoa(`${credentials.apiKey}:${credentials.apiSecret}`)}`,
  );
});

Deno.test("vonage provider maps the statuses of a 200 answer: throttled is temporary, the rest refused", async () => {
  const credentials = randomCredentials();
  const throttled = randomSmsMessage();
  const barred = randomSmsMessage();
  await using server = startFakeVonage({
    ...credentials,
    errors: {
      [throttled.to.slice(1)]: { status: "1", errorText: "Throttled" },
      [barred.to.slice(1)]: { status: "7", errorText: "Number barred." },
    },
  });
  const provider = createVonageProvider({ ...credentials, baseUrl: server.url });

  const slow = await providerErrorOf(provider.send(throttled));
  assert.equal(failureOutcome(slow), "temporary");
  assert.equal(slow.providerCode, "1");
  const refused = await providerErrorOf(provider.send(barred));
  assert.equal(failureOutcome(refused), "refused");
  assert.match(refused.message, /status 7 Number barred/);
  const wrongSecret = createVonageProvider({ ...credentials, apiSecret: "wrong-secret-000", baseUrl: server.url });
  const bad = await providerErrorOf(wrongSecret.send(randomSmsMessage()));
  assert.equal(bad.providerCode, "4");
  assert.equal(failureOutcome(bad), "refused");
  assert.equal(server.messages.length, 0);
});

Deno.test("vonage provider: a 503 is temporary, a 500 may have been sent, a refused connection is temporary", async () => {
  const credentials = randomCredentials();
  const unavailable = randomSmsMessage();
  const broken = randomSmsMessage();
  await using server = startFakeVonage({
    ...credentials,
    httpErrors: { [unavailable.to.slice(1)]: 503, [broken.to.slice(1)]: 500 },
  });
  const provider = createVonageProvider({ ...credentials, baseUrl: server.url });
  assert.equal(failureOutcome(await providerErrorOf(provider.send(unavailable))), "temporary");
  assert.equal(failureOutcome(await providerErrorOf(provider.send(broken))), "unknown");

  const closed = startFakeVonage(credentials);
  await closed.close();
  const nowhere = createVonageProvider({ ...credentials, baseUrl: closed.url });
  assert.equal(failureOutcome(await providerErrorOf(nowhere.send(randomSmsMessage()))), "temporary");
});

Deno.test("vonage provider: no answer within the timeout is unknown (Vonage may have sent it)", async () => {
  const held = Promise.withResolvers<void>();
  const credentials = randomCredentials();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await held.promise;
    return new Response("{}");
  });
  try {
    const provider = createVonageProvider({
      ...credentials,
      baseUrl: `http://127.0.0.1:${server.addr.port}`,
      timeoutMs: 200,
    });
    const error = await providerErrorOf(provider.send(randomSmsMessage()));
    assert.equal(failureOutcome(error), "unknown");
  } finally {
    held.resolve();
    await server.shutdown();
  }
});
