import assert from "node:assert/strict";
import { createService } from "../main.ts";
import type { Deps } from "../shared/deps.ts";
import { createPushProvider } from "../shared/providers/push.ts";
import { pushSends, startFakePush } from "../shared/providers/push_testing.ts";
import { testSendSpec } from "../shared/sending/testing.ts";
import { newTriggerRecord } from "../shared/sending/trigger_record.ts";
import { dbTest, jsonRequest, randomEmail, testDeps, testTeam } from "../shared/testing.ts";
import { createWorkerContext } from "./context.ts";
import { runJob } from "./queue.ts";

const APNS = "0f".repeat(32);
const IOS_FCM = "cZ3oCq1x0Uu:APA91bH" + "k".repeat(140);
const ANDROID_FCM = "eA7pDr2y1Vv:APA91bG" + "m".repeat(140);

/** `deps` whose push channel is `provider` (every other channel the outbox). */
function withPush(deps: Deps, provider: ReturnType<typeof createPushProvider>): Deps {
  const outbox = deps.providers.outbox;
  return { ...deps, providers: { outbox, get: (channel) => channel === "push" ? provider : outbox } };
}

dbTest("a contact's iOS FCM token is sent through FCM and only its APNs token through APNs", async () => {
  const deps = await testDeps();
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const call = async (method: string, path: string, body: unknown) => {
    const res = await app.request(`/api/v1/contacts${path}`, jsonRequest(method, body, { "X-API-Key": keys.live }));
    return { status: res.status, body: await res.json() };
  };
  const created = await call("POST", "", { email: randomEmail(), external_id: "iphone-user", apns_token: APNS });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  await call("PATCH", "/external/iphone-user/device-token", { token: IOS_FCM, platform: "ios" });
  const registered = await call("PATCH", "/external/iphone-user/device-token", { fcm_token: ANDROID_FCM });
  type Device = { token: string; platform: string; provider: string };
  // Devices registered within one millisecond share a created_at, so their order is not defined.
  const devices = registered.body.device_tokens.map((d: Device) => [d.token, d.platform, d.provider]).sort();
  assert.deepEqual(devices, [[APNS, "ios", "apns"], [IOS_FCM, "ios", "fcm"], [ANDROID_FCM, "android", "fcm"]].sort());

  const { fcmServer, apnsServer, fcm, apns } = startFakePush();
  await using _fcm = fcmServer;
  await using _apns = apnsServer;
  const spec = testSendSpec(team.id, {
    sandbox: false,
    trigger_type: "push",
    recipient_type: "contact",
    recipient: { type: "contact", contact_id: created.body.id, external_id: "iphone-user" },
    executions: [{
      id: crypto.randomUUID(),
      content: { channel: "push", title: "Hi", body: "There", category: "transactional" },
    }],
  });
  await deps.sendState.putTrigger(newTriggerRecord(spec));
  const ctx = createWorkerContext(withPush(deps, createPushProvider({ fcm, apns })));
  await runJob(ctx, { type: "send-group", id: crypto.randomUUID(), sends: [spec], attempt: 0 });

  assert.deepEqual(pushSends(apnsServer).map((r) => r.path), [`/3/device/${APNS}`]);
  assert.deepEqual(
    pushSends(fcmServer).map((r) => JSON.parse(r.body).message.token).sort(),
    [ANDROID_FCM, IOS_FCM].sort(),
  );
  const statuses = await deps.sql`select status from messages where trigger_id = ${spec.trigger_id}`;
  assert.deepEqual(statuses.map((r) => r.status), ["sent", "sent", "sent"]);
});
