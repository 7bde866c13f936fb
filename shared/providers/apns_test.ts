import assert from "node:assert/strict";
import { jwtVerify } from "jose";
import { ulid } from "ulid";
import { createApnsProvider } from "./apns.ts";
import { type ApnsErrorSpec, generateP256KeyPair, startFakeApns } from "../../harness/fakes/fake_servers.ts";
import { type OutboundMessage, ProviderError } from "./types.ts";

const keys = await generateP256KeyPair();

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

function randomIosPush(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    id: ulid(),
    teamId: crypto.randomUUID(),
    channel: "push",
    platform: "ios",
    to: randomHex(32),
    title: "Order shipped",
    text: `Order ${randomHex(3)} is on its way`,
    data: { orderId: crypto.randomUUID() },
    priority: "high",
    ...overrides,
  };
}

/** A fake APNs and a provider pointed at it, with a random team, key id and bundle id. */
function setup(errors?: Record<string, ApnsErrorSpec>, hold?: (deviceToken: string) => Promise<void> | undefined) {
  const teamId = randomHex(5).toUpperCase();
  const keyId = randomHex(5).toUpperCase();
  const bundleId = `test.acme.app${randomHex(2)}`;
  const server = startFakeApns({ teamId, keyId, bundleId, publicKey: keys.publicKey, errors, hold });
  const provider = createApnsProvider({
    teamId,
    keyId,
    bundleId,
    privateKey: keys.privateKeyPem,
    baseUrl: server.url,
  });
  return { server, provider, teamId, keyId, bundleId };
}

Deno.test("apns provider sends an alert with an ES256 provider token", async () => {
  const { server, provider, teamId, keyId, bundleId } = setup();
  await using _ = server;
  const message = randomIosPush();

  const result = await provider.send(message);

  assert.equal(server.requests.length, 1);
  const [request] = server.requests;
  assert.equal(request.method, "POST");
  assert.equal(request.path, `/3/device/${message.to}`);
  assert.equal(request.headers.get("apns-topic"), bundleId);
  assert.equal(request.headers.get("apns-push-type"), "alert");
  assert.equal(request.headers.get("apns-priority"), "10");
  // Handed over again after a crash, the same message replaces the first on the device.
  assert.equal(request.headers.get("apns-collapse-id"), message.id);
  const auth = request.headers.get("authorization")!;
  assert.match(auth, /^bearer /);
  const { payload, protectedHeader } = await jwtVerify(auth.slice(7), keys.publicKey);
  assert.equal(protectedHeader.alg, "ES256");
  assert.equal(protectedHeader.kid, keyId);
  assert.equal(payload.iss, teamId);
  assert.equal(typeof payload.iat, "number");
  assert.deepEqual(JSON.parse(request.body), {
    aps: { alert: { title: message.title, body: message.text } },
    orderId: message.data!.orderId,
  });
  assert.equal(result.providerMessageId, request.headers.get("apns-id"));
  assert.match(result.providerMessageId, /^[0-9a-f-]{36}$/);
});

Deno.test("apns provider reuses its provider token and sends normal priority as 5", async () => {
  const { server, provider } = setup();
  await using _ = server;

  await provider.send(randomIosPush());
  await provider.send(randomIosPush({ priority: "normal" }));

  const [first, second] = server.requests;
  assert.equal(first.headers.get("authorization"), second.headers.get("authorization"));
  assert.equal(second.headers.get("apns-priority"), "5");
  assert.notEqual(first.headers.get("apns-id"), second.headers.get("apns-id"));
});

Deno.test("apns provider signals an unregistered token for removal", async () => {
  const message = randomIosPush();
  const { server, provider } = setup({ [message.to]: { status: 410, reason: "Unregistered" } });
  await using _ = server;

  const error = await provider.send(message).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.invalidToken, true);
  assert.equal(error.temporary, false);
  assert.equal(error.providerCode, "Unregistered");
});

Deno.test("apns provider signals a 410 for removal whatever its reason", async () => {
  const message = randomIosPush();
  const { server, provider } = setup({ [message.to]: { status: 410, reason: "ExpiredToken" } });
  await using _ = server;

  const error = await provider.send(message).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.invalidToken, true);
  assert.equal(error.providerCode, "ExpiredToken");
});

Deno.test("apns provider fails but keeps a token APNs calls bad or not for the topic (a wrong environment or bundle id)", async () => {
  const other = randomIosPush();
  const { server, provider } = setup({ [other.to]: { status: 400, reason: "DeviceTokenNotForTopic" } });
  await using _ = server;

  for (
    const [message, reason] of [[randomIosPush({ to: "not-a-hex-token" }), "BadDeviceToken"], [
      other,
      "DeviceTokenNotForTopic",
    ]] as const
  ) {
    const error = await provider.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.providerCode, reason);
    assert.equal(error.invalidToken, false);
    assert.equal(error.temporary, false);
  }
});

Deno.test("apns provider keeps the token when APNs refuses the payload", async () => {
  const message = randomIosPush();
  const { server, provider } = setup({ [message.to]: { status: 413, reason: "PayloadTooLarge" } });
  await using _ = server;

  const error = await provider.send(message).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.invalidToken, false);
  assert.equal(error.temporary, false);
  assert.equal(error.providerCode, "PayloadTooLarge");
});

Deno.test("apns provider reports throttling and outages as temporary", async () => {
  const throttled = randomIosPush();
  const down = randomIosPush();
  const { server, provider } = setup({
    [throttled.to]: { status: 429, reason: "TooManyRequests" },
    [down.to]: { status: 503, reason: "ServiceUnavailable", retryAfter: "30" },
  });
  await using _ = server;

  for (const [message, retryAfterMs] of [[throttled, undefined], [down, 30_000]] as const) {
    const error = await provider.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.temporary, true, error.message);
    assert.equal(error.invalidToken, false);
    assert.equal(error.retryAfterMs, retryAfterMs, "a Retry-After, when there is one, is the retry's delay");
  }
});

Deno.test("apns provider reports a token signed with another key as permanent", async () => {
  const other = await generateP256KeyPair();
  const { server, teamId, keyId, bundleId } = setup();
  await using _ = server;
  const provider = createApnsProvider({
    teamId,
    keyId,
    bundleId,
    privateKey: other.privateKeyPem,
    baseUrl: server.url,
  });

  const error = await provider.send(randomIosPush()).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, false);
  assert.equal(error.invalidToken, false);
  assert.equal(error.providerCode, "InvalidProviderToken");
});

Deno.test("apns provider signs a new provider token once when APNs says it expired", async () => {
  const message = randomIosPush();
  const { server, provider } = setup({ [message.to]: { status: 403, reason: "ExpiredProviderToken" } });
  await using _ = server;

  const error = await provider.send(message).catch((e) => e);

  assert.equal(server.requests.length, 2);
  const [first, retry] = server.requests;
  // No inequality check on the two tokens: signed in the same second they may be byte-identical.
  assert.match(retry.headers.get("authorization")!, /^bearer /);
  assert.equal(first.headers.get("apns-id"), retry.headers.get("apns-id"));
  assert.ok(error instanceof ProviderError);
  assert.equal(error.providerCode, "ExpiredProviderToken");
});

/** Waits for the next second: a provider token signed then differs from one signed before (its `iat`). */
async function nextSecond(): Promise<void> {
  const second = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) === second) await new Promise((r) => setTimeout(r, 20));
}

Deno.test("apns provider replaces an expired provider token once, however many sends met it and whenever", async () => {
  // Apple refuses more than one new provider token every 20 minutes (TooManyProviderTokenUpdates).
  const late = Promise.withResolvers<void>();
  const [a, b, c] = [randomIosPush(), randomIosPush(), randomIosPush()];
  const { server, provider } = setup(
    undefined,
    (device) => device === b.to || device === c.to ? late.promise : undefined,
  );
  await using _ = server;
  await provider.send(randomIosPush());
  server.expireProviderTokens();
  await nextSecond();

  // All three go out with the expired token; b's and c's answers come a second after a has renewed it.
  const sends = [a, b, c].map((m) => provider.send(m));
  await sends[0];
  await nextSecond();
  late.resolve();
  await Promise.all(sends);

  assert.equal(server.providerTokens.length, 2, "the expired token and one new one");
  assert.equal(server.requests.length, 1 + 3 + 3);
  const retries = server.requests.filter((r) =>
    r.headers.get("authorization") === `bearer ${server.providerTokens[1]}`
  );
  assert.equal(retries.length, 3);
});
