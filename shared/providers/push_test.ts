import assert from "node:assert/strict";
import { ulid } from "ulid";
import { createPushProvider } from "./push.ts";
import { pushSends, startFakePush } from "./push_testing.ts";
import { type OutboundMessage, ProviderError } from "./types.ts";

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

Deno.test("push provider sends an ios device's apns token to apns and every other token to fcm", async () => {
  const { fcmServer, apnsServer, fcm, apns } = startFakePush();
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const push = createPushProvider({ fcm, apns });
  const ios = randomPush({ platform: "ios", to: randomHex(32) });
  const android = randomPush({ platform: "android" });
  const web = randomPush({ platform: "web" });
  // An iOS app that uses Firebase registers an FCM token.
  const iosFirebase = randomPush({ platform: "ios", to: `${randomHex(11)}:APA91b${randomHex(70)}` });

  await push.send(ios);
  await push.send(android);
  await push.send(web);
  await push.send(iosFirebase);

  assert.deepEqual(pushSends(apnsServer).map((r) => r.path), [`/3/device/${ios.to}`]);
  assert.deepEqual(pushSends(fcmServer).map((r) => JSON.parse(r.body).message.token), [
    android.to,
    web.to,
    iosFirebase.to,
  ]);
});

Deno.test("push provider follows a message's stored push service over the token's form", async () => {
  const { fcmServer, apnsServer, fcm, apns } = startFakePush();
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const push = createPushProvider({ fcm, apns });
  const toFcm = randomPush({ platform: "ios", to: randomHex(32), pushService: "fcm" });

  await push.send(toFcm);

  assert.equal(pushSends(apnsServer).length, 0);
  assert.deepEqual(pushSends(fcmServer).map((r) => JSON.parse(r.body).message.token), [toFcm.to]);
});

Deno.test("push provider fails ios tokens, keeping them, when apns is not configured (fcm would call them invalid)", async () => {
  const { fcmServer, apnsServer, fcm } = startFakePush();
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const push = createPushProvider({ fcm });
  const ios = randomPush({ platform: "ios", to: randomHex(32) });

  const err = await push.send(ios).then(() => undefined, (e) => e);

  assert.ok(err instanceof ProviderError);
  assert.equal(err.message, "Cannot send push: APNs is not configured");
  assert.equal(err.temporary, false);
  assert.equal(err.invalidToken, false);
  assert.equal(pushSends(fcmServer).length + pushSends(apnsServer).length, 0);
});

Deno.test("push provider passes on the invalid token signal of either service", async () => {
  const goneIos = randomHex(32);
  const goneAndroid = `fcm_${randomHex(40)}`;
  const { fcmServer, apnsServer, fcm, apns } = startFakePush(
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
  assert.equal(pushSends(apnsServer).length, 1);
  assert.equal(pushSends(fcmServer).length, 1);
});

Deno.test("push provider refuses android tokens when only apns is configured", async () => {
  const { fcmServer, apnsServer, apns } = startFakePush();
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const push = createPushProvider({ apns });

  const error = await push.send(randomPush({ platform: "android" })).catch((e) => e);

  assert.ok(error instanceof ProviderError);
  assert.equal(error.temporary, false);
  assert.equal(error.invalidToken, false);
  assert.equal(apnsServer.requests.length, 0);
});
