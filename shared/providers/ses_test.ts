import assert from "node:assert/strict";
import { startFakeSes } from "../../harness/fakes/fake_ses.ts";
import { createSesProvider } from "./ses.ts";
import { providerErrorOf, randomEmailMessage } from "./provider_testing.ts";
import { failureOutcome } from "./types.ts";

function randomCredentials() {
  const key = crypto.randomUUID().replaceAll("-", "").toUpperCase().slice(0, 16);
  return { region: "eu-west-1", accessKeyId: `AKIA${key}`, secretAccessKey: crypto.randomUUID() + crypto.randomUUID() };
}

Deno.test("ses provider sends a signed SendEmail request and answers SES's MessageId", async () => {
  const credentials = randomCredentials();
  await using server = startFakeSes(credentials);
  const provider = createSesProvider({ ...credentials, baseUrl: server.url, configurationSet: "tracking" });
  const message = randomEmailMessage();

  const result = await provider.send(message);

  assert.equal(server.emails.length, 1);
  const [email] = server.emails;
  assert.equal(result.providerMessageId, email.messageId);
  assert.equal(email.request.FromEmailAddress, "Acme News <news@example.com>");
  assert.deepEqual(email.request.Destination?.ToAddresses, [message.to]);
  assert.equal(email.request.ConfigurationSetName, "tracking");
  assert.equal(email.request.Content?.Simple?.Subject?.Data, "Hello");
  assert.equal(email.request.Content?.Simple?.Body?.Html?.Data, "<p>Hi</p>");
  assert.equal(email.request.Content?.Simple?.Body?.Text?.Data, "Hi there");
});

Deno.test("ses provider: a wrong secret key is refused by the signature check", async () => {
  const credentials = randomCredentials();
  await using server = startFakeSes(credentials);
  const provider = createSesProvider({ ...credentials, secretAccessKey: "wrong", baseUrl: server.url });
  const error = await providerErrorOf(provider.send(randomEmailMessage()));
  assert.equal(error.providerCode, "SignatureDoesNotMatch");
  assert.equal(failureOutcome(error), "refused");
  assert.equal(server.emails.length, 0);
});

Deno.test("ses provider maps SES errors: MessageRejected refused, throttling temporary, a 500 unknown", async () => {
  const credentials = randomCredentials();
  const rejected = randomEmailMessage();
  const throttled = randomEmailMessage();
  const failing = randomEmailMessage();
  await using server = startFakeSes({
    ...credentials,
    errors: {
      [rejected.to]: { status: 400, type: "MessageRejected", message: "Email address is not verified." },
      [throttled.to]: { status: 429, type: "TooManyRequestsException", message: "Maximum sending rate exceeded." },
      [failing.to]: { status: 500, type: "InternalFailure", message: "Internal failure" },
    },
  });
  const provider = createSesProvider({ ...credentials, baseUrl: server.url });

  const refused = await providerErrorOf(provider.send(rejected));
  assert.equal(refused.providerCode, "MessageRejected");
  assert.equal(failureOutcome(refused), "refused");
  assert.match(refused.message, /Email address is not verified/);
  assert.equal(failureOutcome(await providerErrorOf(provider.send(throttled))), "temporary");
  assert.equal(failureOutcome(await providerErrorOf(provider.send(failing))), "unknown");
  assert.equal(server.requests.length, 3, "one try each: retrying is the queue's call");
});

Deno.test("ses provider: a refused connection is temporary, no answer in time unknown", async () => {
  const credentials = randomCredentials();
  const closed = startFakeSes(credentials);
  await closed.close();
  const nowhere = createSesProvider({ ...credentials, baseUrl: closed.url });
  assert.equal(failureOutcome(await providerErrorOf(nowhere.send(randomEmailMessage()))), "temporary");

  const held = Promise.withResolvers<void>();
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async () => {
    await held.promise;
    return Response.json({ MessageId: "late" });
  });
  try {
    const slow = createSesProvider({ ...credentials, baseUrl: `http://127.0.0.1:${server.addr.port}`, timeoutMs: 200 });
    assert.equal(failureOutcome(await providerErrorOf(slow.send(randomEmailMessage()))), "unknown");
  } finally {
    held.resolve();
    await server.shutdown();
  }
});
