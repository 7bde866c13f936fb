/**
 * Crash test (`deno task test:crash`): starts the real service as a child process on fresh data,
 * fires a 20,000-contact email send, a two-step workflow to 2,000 contacts and an SMS send to them,
 * and SIGKILLs the service several times at seeded random moments while they run, restarting it on
 * the same data each time. Emails go to the outbox; the SMS go through the real Twilio provider to a
 * fake Twilio API in this process, which answers after TWILIO_LATENCY_MS (so that kills land while
 * SMS are in Twilio's hands). Then every eligible recipient must have received exactly one email per
 * send and step and at most one SMS (an SMS a kill left in Twilio's hands is looked up in Twilio's
 * log: recorded sent with its sid when Twilio has it, else failed with that reason and refunded; none
 * that Twilio accepted may end failed), every trigger must be completed with exact counters, and the wallet must equal
 * its ledger and the SMS sent — also after one more start that runs every queue message the kills
 * left behind (late redeliveries). A webhook endpoint in this process must have received every
 * trigger.completed, workflow.completed and message.failed of the run, each object under one event
 * id, and nothing may be left in the event outbox (webhooks.ts). Exits 1 with the details otherwise.
 *
 * Settings (env): CRASH_SEED (7), CRASH_KILLS (4), CRASH_CONTACTS (20000), CRASH_WORKFLOW (2000),
 * CRASH_TIMEOUT_S (300, the wait for completion after the last restart), CRASH_MAX_RECOVERY_S (45,
 * restart to delivering again), CRASH_TWILIO_LATENCY_MS (25: longer leaves more SMS in Twilio's hands
 * at a kill), CRASH_KEEP=1 keeps the data folder; DATABASE_URL runs on that server
 * in a fresh database (dropped at the end), else PGlite.
 */
import { parseConfig } from "../../shared/config.ts";
import { startFakeTwilio } from "../../shared/providers/fake_servers.ts";
import { connectDatabase } from "../../shared/db.ts";
import { Api, fire, type Scenario, setUp } from "./scenario.ts";
import { delay, freePort, freshDatabase, ServiceProcess } from "./service.ts";
import { EVENT_SWEEP_AGE_MS, EVENT_SWEEP_EVERY_MS, SWEPT_MESSAGE } from "../../shared/event_outbox.ts";
import { checkWebhooks, receivedSummary, WATCHED, WebhookReceiver } from "./webhooks.ts";
import {
  allFinal,
  checkStoredData,
  checkThroughApi,
  jobsHandled,
  newestOutbox,
  spooledPages,
  type TwilioReceipts,
} from "./verify.ts";

const env = Deno.env.toObject();
const SEED = Number(env.CRASH_SEED ?? 7);
const KILLS = Number(env.CRASH_KILLS ?? 4);
const TIMEOUT_MS = Number(env.CRASH_TIMEOUT_S ?? 300) * 1_000;
/** Delivery must resume within this after a restart (the jobs a kill cut off are taken up again, see shared/engine/kv/inflight.ts). */
const MAX_RECOVERY_MS = Number(env.CRASH_MAX_RECOVERY_S ?? 45) * 1_000;
const SIZE = {
  contacts: Number(env.CRASH_CONTACTS ?? 20_000),
  workflow: Number(env.CRASH_WORKFLOW ?? 2_000),
  inactiveEvery: 50,
};
const TOP_UP_USD = 100;
/** How long the last start runs the queue messages left over from the kills. */
const LATE_REDELIVERY_MS = 8_000;
/** How long the fake Twilio takes to answer an accepted SMS (a real API round trip). */
const TWILIO_LATENCY_MS = Number(env.CRASH_TWILIO_LATENCY_MS ?? 25);
const PROVIDER_VARS = [
  "RESEND_API_KEY",
  "TWILIO_ACCOUNT_SID",
  "TWILIO_AUTH_TOKEN",
  "FCM_SERVICE_ACCOUNT",
  "APNS_PRIVATE_KEY",
  "PRICE_SMS_SEGMENT",
  "DATABASE_URL",
];

/** mulberry32: a small seeded generator, so that a failing run can be replayed with its seed. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Recovery {
  kill: number;
  killedAfterMs: number;
  healthyMs: number;
  progressMs: number | "done";
}

/** The fake Twilio of the run: what it received, and when it last received an SMS. */
interface Twilio {
  receipts(): TwilioReceipts;
  lastAt(): number;
}

/** After a restart: waits until a message newer than the restart is delivered, or every send is final. */
async function waitForProgress(api: Api, s: Scenario, twilio: Twilio, restartedAt: number): Promise<number | "done"> {
  const deadline = Date.now() + 120_000;
  let lastFinalCheck = 0;
  while (Date.now() < deadline) {
    const newest = await newestOutbox(api, s.teamId);
    if (newest && Date.parse(newest.created_at) >= restartedAt) return Date.now() - restartedAt;
    if (twilio.lastAt() >= restartedAt) return Date.now() - restartedAt;
    if (Date.now() - lastFinalCheck > 1_000) {
      lastFinalCheck = Date.now();
      if (await allFinal(api, s)) return "done";
    }
    await delay(100);
  }
  throw new Error("Delivery did not resume within 120 s of a restart");
}

async function main(): Promise<number> {
  const started = Date.now();
  const random = seededRandom(SEED);
  const dir = await Deno.makeTempDir({ prefix: "crash_test_" });
  const database = env.DATABASE_URL ? await freshDatabase("crash", env.DATABASE_URL) : undefined;
  const adminToken = `crash-admin-${crypto.randomUUID()}`;
  const credentials = { accountSid: `AC${"c".repeat(32)}`, authToken: crypto.randomUUID().replaceAll("-", "") };
  let lastSmsAt = 0;
  const fakeTwilio = startFakeTwilio({
    ...credentials,
    hold: () => {
      lastSmsAt = Date.now();
      return delay(TWILIO_LATENCY_MS);
    },
  });
  const twilio: Twilio = {
    receipts() {
      const received = new Map<string, number>();
      // The creates only: the service also reads Twilio's log (GET) for messages a kill abandoned.
      for (const r of fakeTwilio.requests.filter((r) => r.method === "POST")) {
        const to = new URLSearchParams(r.body).get("To") ?? "";
        received.set(to, (received.get(to) ?? 0) + 1);
      }
      const accepted = new Map(fakeTwilio.messages.map((m) => [m.to, m.sid]));
      const lookups = fakeTwilio.requests.filter((r) => r.method === "GET").length;
      return { received, accepted, lookups };
    },
    lastAt: () => lastSmsAt,
  };
  const receiver = new WebhookReceiver();
  // Added to this process's environment; other provider credentials are blanked so that the rest goes to the outbox.
  const serviceEnv: Record<string, string> = {
    ...Object.fromEntries(PROVIDER_VARS.map((name) => [name, ""])),
    TWILIO_ACCOUNT_SID: credentials.accountSid,
    TWILIO_AUTH_TOKEN: credentials.authToken,
    TWILIO_BASE_URL: fakeTwilio.url,
    PORT: String(freePort()),
    HOST: "127.0.0.1",
    PGLITE_DIR: `${dir}/pg`,
    KV_PATH: `${dir}/kv.sqlite3`,
    ADMIN_TOKEN: adminToken,
    OTP_TOKEN_SECRET: `crash-otp-${crypto.randomUUID()}`,
    DEMO_SEED: "0",
    LOG_LEVEL: "warn",
    // The burst of direct sends (fired at once) goes through the spool: a burst is anything over 20 a second.
    SEND_DEFER_RATE: "20",
    // The webhook endpoint is on loopback.
    WEBHOOK_ALLOW_PRIVATE: "1",
    ...(database ? { DATABASE_URL: database.url } : {}),
  };
  const service = new ServiceProcess(serviceEnv, `${dir}/service.log`);
  const api = new Api(service.baseUrl, adminToken);
  const problems: string[] = [];
  const recoveries: Recovery[] = [];
  console.log(
    `crash test: seed ${SEED}, ${KILLS} kills, ${SIZE.contacts} contacts (${SIZE.workflow} in the workflow), ` +
      `${database ? "PostgreSQL server" : "PGlite"}, data in ${dir}`,
  );
  try {
    const first = Date.now();
    await service.start();
    console.log(`service healthy after ${await service.waitHealthy(first)} ms`);
    const setupStarted = Date.now();
    const ids = await setUp(api, SIZE, TOP_UP_USD);
    await api.call("POST", "/api/v1/webhooks", {
      key: ids.apiKey,
      body: { url: receiver.url, events: Object.keys(WATCHED) },
      expect: [201],
    });
    console.log(`set up ${SIZE.contacts} contacts, templates and the workflow in ${Date.now() - setupStarted} ms`);
    const fired = Date.now();
    const s: Scenario = {
      ...ids,
      ...await fire(api, ids.apiKey, ids.workflowId),
      topUpMicros: TOP_UP_USD * 1_000_000,
      size: SIZE,
    };
    console.log(`fired: ${JSON.stringify(s.triggers)} and ${s.direct.length} direct emails`);
    // The direct emails wait in the spool until their drain job comes due (a second after their slot).
    const spooled = await spooledPages(service.baseUrl);
    if (spooled === 0) problems.push("the burst of direct emails did not go through the spool");
    else console.log(`${spooled} spool pages waiting after the burst`);
    let lastKillAt = 0;
    for (let kill = 1; kill <= KILLS; kill++) {
      const wait = Math.round(100 + random() * 900);
      await delay(wait);
      await service.kill();
      lastKillAt = Date.now();
      const restartedAt = Date.now();
      await service.start();
      const healthyMs = await service.waitHealthy(restartedAt);
      const progressMs = await waitForProgress(api, s, twilio, restartedAt);
      recoveries.push({ kill, killedAfterMs: wait, healthyMs, progressMs });
      if (progressMs !== "done" && progressMs > MAX_RECOVERY_MS) {
        problems.push(`kill ${kill}: delivery resumed only ${progressMs} ms after the restart`);
      }
      console.log(
        `kill ${kill}: SIGKILL after ${wait} ms; /healthz ok ${healthyMs} ms after the restart; ` +
          (progressMs === "done" ? "every send was already final" : `delivering again ${progressMs} ms after it`),
      );
    }
    const deadline = Date.now() + TIMEOUT_MS;
    while (!await allFinal(api, s)) {
      if (Date.now() > deadline) {
        problems.push(`sends not final ${TIMEOUT_MS / 1000} s after the last restart`);
        break;
      }
      await delay(500);
    }
    console.log(`every send final ${Date.now() - fired} ms after firing`);
    // Nothing may arrive once every send is final (a late redelivered job sending again).
    const before = await newestOutbox(api, s.teamId);
    const smsBefore = fakeTwilio.requests.length;
    await delay(3_000);
    const after = await newestOutbox(api, s.teamId);
    if (before?.id !== after?.id) problems.push(`messages were still delivered after every send was final`);
    if (fakeTwilio.requests.length !== smsBefore) problems.push(`SMS were still sent after every send was final`);
    problems.push(...await checkThroughApi(api, s));
    let status = await service.stop();
    if (!status.success) problems.push(`graceful stop exited with code ${status.code}`);
    // Queue messages a kill left "running" come back when KV is opened past their 5 s deadline: one more
    // start then runs every late redelivery at once, and they must change nothing.
    await delay(6_000);
    await service.start();
    await service.waitHealthy(Date.now());
    await delay(LATE_REDELIVERY_MS);
    // Webhook events a kill left staged are relayed by a sweep once they are EVENT_SWEEP_AGE_MS old.
    await receiver.settle(lastKillAt + EVENT_SWEEP_AGE_MS + 2 * EVENT_SWEEP_EVERY_MS - Date.now());
    const swept = (await service.logged(SWEPT_MESSAGE)).reduce((n, e) => n + Number(e.events), 0);
    console.log(`webhooks received: ${receivedSummary(receiver)}; ${swept} events relayed late by the sweep`);
    const late = await jobsHandled(service.baseUrl);
    console.log(`late start: ${late.ok} queue jobs left over from the kills ran again (${late.error} failed)`);
    problems.push(...(await checkThroughApi(api, s)).map((p) => `after the late redeliveries: ${p}`));
    status = await service.stop();
    if (!status.success) problems.push(`graceful stop exited with code ${status.code}`);
    const db = await connectDatabase(
      parseConfig({ PGLITE_DIR: serviceEnv.PGLITE_DIR, DATABASE_URL: serviceEnv.DATABASE_URL }),
      { max: 2 },
    );
    try {
      problems.push(...await checkStoredData(db.sql, s, twilio.receipts()));
      problems.push(...await checkWebhooks(db.sql, s, receiver));
    } finally {
      await db.close();
    }
  } catch (err) {
    problems.push(`run stopped: ${err instanceof Error ? err.message : String(err)}`);
    if (service.running) await service.kill().catch(() => {});
  } finally {
    await database?.drop().catch((err) => console.error(`cannot drop the crash database: ${err}`));
    await fakeTwilio.close();
    await receiver.close();
  }
  console.log("recovery after each kill (restart → /healthz ok → delivering again):");
  for (const r of recoveries) {
    console.log(
      `  kill ${r.kill}: healthy ${r.healthyMs} ms, delivering ${
        r.progressMs === "done" ? "n/a (all final)" : `${r.progressMs} ms`
      }`,
    );
  }
  console.log(`total ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (problems.length > 0) {
    console.error(`CRASH TEST FAILED (seed ${SEED}):\n  ${problems.join("\n  ")}`);
    console.error(`service output (last lines):\n${await service.tail()}`);
    console.error(`data kept in ${dir}`);
    return 1;
  }
  if (env.CRASH_KEEP !== "1") await Deno.remove(dir, { recursive: true });
  console.log(
    "crash test passed: exactly one email per send, step and recipient, at most one SMS; exact counters and wallet; " +
      "every webhook event",
  );
  return 0;
}

if (import.meta.main) Deno.exit(await main());
