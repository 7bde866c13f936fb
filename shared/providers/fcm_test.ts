import assert from "node:assert/strict";
import { decodeJwt, jwtVerify } from "jose";
import { ulid } from "ulid";
import { type FcmErrorSpec, generateRsaKeyPair, startFakeFcm } from "../../harness/fakes/fake_servers.ts";
import { createFcmProvider } from "./fcm.ts";
import { type OutboundMessage, ProviderError } from "./types.ts";

const keys = await generateRsaKeyPair();

function randomDeviceToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(96));
  return `d${btoa(String.fromCharCode(...bytes)).replace(/[+/=]/g, "_")}:APA91b`;
}

function randomPush(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    id: ulid(),
    teamId: crypto.randomUUID(),
    channel: "push",
    platform: "android",
    to: randomDeviceToken(),
    title: "Order shipped",
    text: `Order ${crypto.randomUUID().slice(0, 6)} is on its way`,
    data: { orderId: crypto.randomUUID() },
    priority: "high",
    ...overrides,
  };
}

/** A fake FCM and a provider pointed at it, with a random project and service account. */
function setup(errors?: Record<string, FcmErrorSpec>) {
  const projectId = `project-${crypto.randomUUID().slice(0, 8)}`;
  const clientEmail = `sender@${projectId}.iam.gserviceaccount.com`;
  const server = startFakeFcm({ projectId, clientEmail, publicKey: keys.publicKey, errors });
  const provider = createFcmProvider({
    serviceAccount: {
      project_id: projectId,
      client_email: clientEmail,
      private_key: keys.privateKeyPem,
      token_uri: server.tokenUrl,
    },
    baseUrl: server.url,
  });
  return { server, provider, projectId, clientEmail };
}

Deno.test("fcm provider exchanges a signed service-account JWT and sends with the access token", async () => {
  const { server, provider, projectId, clientEmail } = setup();
  await using _ = server;
  const message = randomPush({ imageUrl: "https://cdn.example.test/box.png" });

  const result = await provider.send(message);

  assert.equal(server.requests.length, 2);
  const [tokenRequest, sendRequest] = server.requests;
  assert.equal(tokenRequest.path, "/token");
  const form = new URLSearchParams(tokenRequest.body);
  assert.equal(form.get("grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer");
  const { payload, protectedHeader } = await jwtVerify(form.get("assertion")!, keys.publicKey);
  assert.equal(protectedHeader.alg, "RS256");
  assert.equal(payload.iss, clientEmail);
  assert.equal(payload.aud, server.tokenUrl);
  assert.equal(payload.scope, "https://www.googleapis.com/auth/firebase.messaging");
  assert.equal(payload.exp! - payload.iat!, 3600);

  assert.equal(sendRequest.method, "POST");
  assert.equal(sendRequest.path, `/v1/projects/${projectId}/messages:send`);
  assert.equal(sendRequest.headers.get("authorization"), `Bearer ${server.issuedTokens[0]}`);
  const body = JSON.parse(sendRequest.body);
  assert.equal(body.message.token, message.to);
  assert.deepEqual(body.message.notification, {
    title: message.title,
    body: message.text,
    image: "https://cdn.example.test/box.png",
  });
  assert.deepEqual(body.message.data, message.data);
  assert.equal(body.message.android.priority, "HIGH");
  // Handed over again after a crash, the same message replaces the first in the notification drawer.
  assert.equal(body.message.android.notification.tag, message.id);
  assert.equal(body.message.webpush.notification.tag, message.id);
  assert.equal(body.message.apns.headers["apns-priority"], "10");
  assert.match(result.providerMessageId, new RegExp(`^projects/${projectId}/messages/`));
});

Deno.test("fcm provider reuses one access token for concurrent and later sends", async () => {
  const { server, provider } = setup();
  await using _ = server;

  await Promise.all([provider.send(randomPush()), provider.send(randomPush()), provider.send(randomPush())]);
  await provider.send(randomPush({ priority: "normal" }));

  assert.equal(server.issuedTokens.length, 1);
  assert.equal(server.requests.filter((r) => r.path === "/token").length, 1);
  assert.equal(server.requests.filter((r) => r.path.endsWith("messages:send")).length, 4);
  const last = JSON.parse(server.requests.at(-1)!.body);
  assert.equal(last.message.android.priority, "NORMAL");
  assert.equal(last.message.apns.headers["apns-priority"], "5");
});

Deno.test("fcm provider fetches a new access token once when FCM refuses the cached one", async () => {
  const { server, provider } = setup();
  await using _ = server;
  await provider.send(randomPush());
  server.issuedTokens.length = 0; // FCM forgets every token it issued

  await provider.send(randomPush());

  assert.deepEqual(server.requests.map((r) => r.path.split("/").at(-1)), [
    "token",
    "messages:send",
    "messages:send",
    "token",
    "messages:send",
  ]);
  assert.equal(server.requests.at(-1)!.headers.get("authorization"), `Bearer ${server.issuedTokens[0]}`);
});

Deno.test("fcm provider renews a refused access token once for all the sends that met it at once", async () => {
  const { server, provider } = setup();
  await using _ = server;
  await provider.send(randomPush());
  server.issuedTokens.length = 0; // FCM forgets every token it issued

  await Promise.all(Array.from({ length: 8 }, () => provider.send(randomPush())));

  assert.equal(server.requests.filter((r) => r.path === "/token").length, 2);
  assert.equal(server.issuedTokens.length, 1);
  const sends = server.requests.filter((r) => r.path.endsWith("messages:send"));
  assert.equal(sends.length, 1 + 8 + 8);
  const renewed = sends.filter((r) => r.headers.get("authorization") === `Bearer ${server.issuedTokens[0]}`);
  assert.equal(renewed.length, 8);
});

Deno.test("fcm provider fails a THIRD_PARTY_AUTH_ERROR for good without renewing its access token", async () => {
  const message = randomPush({ platform: "ios" });
  const { server, provider } = setup({
    [message.to]: {
      status: 401,
      errorCode: "THIRD_PARTY_AUTH_ERROR",
      message: "Auth error from APNS or Web Push Service",
    },
  });
  await using _ = server;

  const error = await provider.send(message).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.providerCode, "THIRD_PARTY_AUTH_ERROR");
  assert.equal(error.temporary, false);
  assert.equal(error.invalidToken, false);
  assert.deepEqual(server.requests.map((r) => r.path.split("/").at(-1)), ["token", "messages:send"]);
});

Deno.test("fcm provider signals an unregistered token for removal", async () => {
  const message = randomPush();
  const { server, provider } = setup({
    [message.to]: { status: 404, errorCode: "UNREGISTERED", message: "Requested entity was not found." },
  });
  await using _ = server;

  const error = await provider.send(message).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.invalidToken, true);
  assert.equal(error.temporary, false);
  assert.equal(error.providerCode, "UNREGISTERED");
});

Deno.test("fcm provider signals a malformed token for removal", async () => {
  const message = randomPush();
  const { server, provider } = setup({
    [message.to]: {
      status: 400,
      errorCode: "INVALID_ARGUMENT",
      message: "The registration token is not a valid FCM registration token",
      tokenViolation: true,
    },
  });
  await using _ = server;

  const error = await provider.send(message).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.invalidToken, true);
  assert.equal(error.temporary, false);
});

Deno.test("fcm provider keeps the token on an invalid argument about the payload", async () => {
  const message = randomPush();
  const { server, provider } = setup({
    [message.to]: {
      status: 400,
      errorCode: "INVALID_ARGUMENT",
      message: "Invalid value at 'message.data[0].value' (TYPE_STRING), 3",
    },
  });
  await using _ = server;

  const error = await provider.send(message).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.invalidToken, false);
  assert.equal(error.temporary, false);
  assert.match(error.message, /message\.data/);
});

Deno.test("fcm provider reports quota and outages as temporary", async () => {
  const limited = randomPush();
  const down = randomPush();
  const { server, provider } = setup({
    [limited.to]: { status: 429, errorCode: "QUOTA_EXCEEDED", message: "Quota exceeded." },
    [down.to]: { status: 503, errorCode: "UNAVAILABLE", message: "The service is unavailable." },
  });
  await using _ = server;

  for (const message of [limited, down]) {
    const error = await provider.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.temporary, true, error.message);
    assert.equal(error.invalidToken, false);
  }
});

Deno.test("fcm provider passes on Retry-After, and waits a minute at least over the message-rate quota", async () => {
  const busy = randomPush();
  const quota = randomPush();
  const { server, provider } = setup({
    [busy.to]: { status: 503, errorCode: "UNAVAILABLE", message: "The service is unavailable.", retryAfter: "30" },
    [quota.to]: { status: 429, errorCode: "QUOTA_EXCEEDED", message: "Quota exceeded." },
  });
  await using _ = server;

  for (const [message, ms] of [[busy, 30_000], [quota, 60_000]] as const) {
    const error = await provider.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.temporary, true);
    assert.equal(error.retryAfterMs, ms, error.providerCode);
  }
});

Deno.test("fcm provider reports a service account the token endpoint refuses as permanent", async () => {
  const other = await generateRsaKeyPair();
  const projectId = "project-x";
  const clientEmail = "sender@project-x.iam.gserviceaccount.com";
  await using server = startFakeFcm({ projectId, clientEmail, publicKey: keys.publicKey });
  const provider = createFcmProvider({
    serviceAccount: { project_id: projectId, client_email: clientEmail, private_key: other.privateKeyPem },
    baseUrl: server.url,
    tokenUrl: server.tokenUrl,
  });

  const error = await provider.send(randomPush()).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, false);
  assert.equal(error.providerCode, "invalid_grant");
  assert.equal(decodeJwt(new URLSearchParams(server.requests[0].body).get("assertion")!).iss, clientEmail);
  assert.equal(server.requests.length, 1);
});
