import assert from "node:assert/strict";
import { ulid } from "ulid";
import { createApnsProvider } from "./apns.ts";
import {
  type FakeServer,
  generateP256KeyPair,
  generateRsaKeyPair,
  type RecordedRequest,
  startFakeApns,
  startFakeFcm,
} from "./fake_servers.ts";
import { createFcmProvider } from "./fcm.ts";
import { createPushProvider } from "./push.ts";
import { type OutboundMessage, ProviderError } from "./types.ts";

const rsa = await generateRsaKeyPair();
const p256 = await generateP256KeyPair();

function randomHex(bytes: number): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(bytes)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

function randomPush(overrides: Partial<OutboundMessage> = {}): OutboundMessage {
  return {
    id: ulid(),
    teamId: crypto.randomUUID(),
    channel: "push",
    platform: "android",
    to: `fcm_${randomHex(40)}`,
    title: "Hello",
    text: `Message ${randomHex(3)}`,
    ...overrides,
  };
}

const project = { projectId: "push-test", clientEmail: "push@push-test.iam.gserviceaccount.com" };
const apple = { teamId: "TEAM123456", keyId: "KEY1234567", bundleId: "test.acme.app" };

/** Fake FCM and APNs servers (each stopped by `await using`) with clients pointed at them. */
function startFakes(
  fcmErrors: Parameters<typeof startFakeFcm>[0]["errors"] = {},
  apnsErrors: Parameters<typeof startFakeApns>[0]["errors"] = {},
) {
  const fcmServer = startFakeFcm({ ...project, publicKey: rsa.publicKey, errors: fcmErrors });
  const apnsServer = startFakeApns({ ...apple, publicKey: p256.publicKey, errors: apnsErrors });
  const fcm = createFcmProvider({
    serviceAccount: {
      project_id: project.projectId,
      client_email: project.clientEmail,
      private_key: rsa.privateKeyPem,
    },
    baseUrl: fcmServer.url,
    tokenUrl: fcmServer.tokenUrl,
  });
  const apns = createApnsProvider({ ...apple, privateKey: p256.privateKeyPem, baseUrl: apnsServer.url });
  return { fcmServer, apnsServer, fcm, apns };
}

/** The requests that delivered a notification (not the OAuth token exchanges). */
function sends(server: FakeServer): RecordedRequest[] {
  return server.requests.filter((r) => r.path !== "/token");
}

Deno.test("push provider sends ios tokens to apns and other platforms to fcm", async () => {
  const { fcmServer, apnsServer, fcm, apns } = startFakes();
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const push = createPushProvider({ fcm, apns });
  const ios = randomPush({ platform: "ios", to: randomHex(32) });
  const android = randomPush({ platform: "android" });
  const web = randomPush({ platform: "web" });

  await push.send(ios);
  await push.send(android);
  await push.send(web);

  assert.deepEqual(sends(apnsServer).map((r) => r.path), [`/3/device/${ios.to}`]);
  assert.deepEqual(sends(fcmServer).map((r) => JSON.parse(r.body).message.token), [android.to, web.to]);
});

Deno.test("push provider fails ios tokens, keeping them, when apns is not configured (fcm would call them invalid)", async () => {
  const { fcmServer, apnsServer, fcm } = startFakes();
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const push = createPushProvider({ fcm });
  const ios = randomPush({ platform: "ios", to: randomHex(32) });

  const err = await push.send(ios).then(() => undefined, (e) => e);

  assert.ok(err instanceof ProviderError);
  assert.equal(err.message, "Cannot send push: no provider for ios devices");
  assert.equal(err.temporary, false);
  assert.equal(err.invalidToken, false);
  assert.equal(sends(fcmServer).length + sends(apnsServer).length, 0);
});

Deno.test("push provider passes on the invalid token signal of either service", async () => {
  const goneIos = randomHex(32);
  const goneAndroid = `fcm_${randomHex(40)}`;
  const { fcmServer, apnsServer, fcm, apns } = startFakes(
    { [goneAndroid]: { status: 404, errorCode: "UNREGISTERED", message: "Requested entity was not found." } },
    { [goneIos]: { status: 410, reason: "Unregistered" } },
  );
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const push = createPushProvider({ fcm, apns });

  for (const message of [randomPush({ platform: "ios", to: goneIos }), randomPush({ to: goneAndroid })]) {
    const error = await push.send(message).catch((e) => e);
    assert.ok(error instanceof ProviderError);
    assert.equal(error.invalidToken, true);
    assert.equal(error.temporary, false);
  }
  assert.equal(sends(apnsServer).length, 1);
  assert.equal(sends(fcmServer).length, 1);
});

Deno.test("push provider refuses android tokens when only apns is configured", async () => {
  const { fcmServer, apnsServer, apns } = startFakes();
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const push = createPushProvider({ apns });

  const error = await push.send(randomPush({ platform: "android" })).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, false);
  assert.equal(error.invalidToken, false);
  assert.equal(apnsServer.requests.length, 0);
});
