import assert from "node:assert/strict";
import { Resend } from "resend";
import { newWebhookSecret, signWebhook, verifyWebhook, webhookHeaders } from "./webhook_signing.ts";

// The published test vector of the Standard Webhooks specification
// (standard-webhooks/standard-webhooks, libraries/javascript/src/webhook.test.ts, "sign function works").
const VECTOR = {
  secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  id: "msg_p5jXN8AQM9LWM0D4loKWxJek",
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
};

/** The `standardwebhooks` library, as the Resend SDK exposes it: an independent verifier. */
function libraryVerify(secret: string, headers: Record<string, string>, body: string): unknown {
  return new Resend("re_test_unused").webhooks.verify({
    payload: body,
    headers: {
      id: headers["webhook-id"],
      timestamp: headers["webhook-timestamp"],
      signature: headers["webhook-signature"],
    },
    webhookSecret: secret,
  });
}

Deno.test("signWebhook() reproduces the Standard Webhooks test vector", async () => {
  assert.equal(await signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature);
});

Deno.test("verifyWebhook() accepts the test vector at its time and refuses it 5 minutes later", async () => {
  const headers = new Headers({
    "webhook-id": VECTOR.id,
    "webhook-timestamp": String(VECTOR.timestamp),
    "webhook-signature": VECTOR.signature,
  });
  assert.equal(await verifyWebhook(VECTOR.secret, headers, VECTOR.body, { now: VECTOR.timestamp * 1000 }), true);
  assert.equal(
    await verifyWebhook(VECTOR.secret, headers, VECTOR.body, { now: (VECTOR.timestamp + 301) * 1000 }),
    false,
  );
});

Deno.test("newWebhookSecret() is whsec_ and 32 random bytes in base64", () => {
  const secret = newWebhookSecret();
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  assert.notEqual(secret, newWebhookSecret());
});

Deno.test("webhookHeaders() signatures pass the standardwebhooks library's verification", async () => {
  const secret = newWebhookSecret();
  const body = JSON.stringify({ id: "evt_1", type: "message.delivered", data: { status: "delivered" } });
  const headers = await webhookHeaders([secret], "evt_1", Math.floor(Date.now() / 1000), body);
  assert.deepEqual(libraryVerify(secret, headers, body), JSON.parse(body));
  assert.throws(() => libraryVerify(secret, headers, body.replace("delivered", "failed")));
  assert.throws(() => libraryVerify(newWebhookSecret(), headers, body));
});

Deno.test("webhookHeaders() with two secrets verifies with either (secret rotation)", async () => {
  const [oldSecret, newSecret] = [newWebhookSecret(), newWebhookSecret()];
  const body = '{"a":1}';
  const headers = await webhookHeaders([newSecret, oldSecret], "evt_2", Math.floor(Date.now() / 1000), body);
  assert.equal(headers["webhook-signature"].split(" ").length, 2);
  assert.ok(libraryVerify(oldSecret, headers, body));
  assert.ok(libraryVerify(newSecret, headers, body));
  assert.equal(await verifyWebhook(oldSecret, new Headers(headers), body), true);
});

Deno.test("verifyWebhook() reads Svix headers and refuses a tampered body, a wrong secret or missing headers", async () => {
  const secret = newWebhookSecret();
  const body = '{"type":"email.delivered"}';
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = await signWebhook(secret, "msg_1", timestamp, body);
  const svix = new Headers({ "svix-id": "msg_1", "svix-timestamp": String(timestamp), "svix-signature": signature });
  assert.equal(await verifyWebhook(secret, svix, body), true);
  assert.equal(await verifyWebhook(secret, svix, body + " "), false);
  assert.equal(await verifyWebhook(newWebhookSecret(), svix, body), false);
  assert.equal(await verifyWebhook(secret, new Headers({ "svix-id": "msg_1" }), body), false);
  const garbage = new Headers({
    "webhook-id": "x",
    "webhook-timestamp": String(timestamp),
    "webhook-signature": "v1,%%",
  });
  assert.equal(await verifyWebhook(secret, garbage, body), false);
});

Deno.test("signWebhook() keeps each secret's key apart, and a secret it cannot use fails every time", async () => {
  // Signed again and alternated: a kept key must be the key of its own secret.
  for (let round = 0; round < 2; round++) {
    assert.equal(await signWebhook(VECTOR.secret, VECTOR.id, VECTOR.timestamp, VECTOR.body), VECTOR.signature);
    const other = await signWebhook(newWebhookSecret(), VECTOR.id, VECTOR.timestamp, VECTOR.body);
    assert.notEqual(other, VECTOR.signature);
  }
  for (let round = 0; round < 2; round++) {
    await assert.rejects(signWebhook("whsec_", "msg_1", 1, "{}"), /Cannot use webhook secret: not base64/);
  }
});
