/**
 * One run of the crash test: the service (one process, or several replicas on one database) on
 * fresh data, the scenario fired at it, a disruption while it runs (kills, a database restart:
 * disruptions.ts), then every check of verify.ts and webhooks.ts. crash.ts chooses the runs.
 */
import { parseConfig } from "../../shared/config.ts";
import { connectDatabase } from "../../shared/db.ts";
import { EVENT_SWEEP_AGE_MS, EVENT_SWEEP_EVERY_MS, SWEPT_MESSAGE } from "../../shared/event_outbox.ts";
import { startFakeTwilio } from "../fakes/fake_servers.ts";
import { fireFailover, setUpFailover, startFailoverFakes } from "./failover.ts";
import { Api, fire, type Scenario, type ScenarioSize, setUp } from "./scenario.ts";
import { delay, freePort, ServiceProcess } from "./service.ts";
import {
  allFinal,
  checkStoredData,
  checkThroughApi,
  jobsHandled,
  newestOutbox,
  spooledPages,
  type TwilioReceipts,
} from "./verify.ts";
import { checkFailoverStored, checkFailoverThroughApi } from "./verify_failover.ts";
import { checkWebhooks, receivedSummary, WATCHED, WebhookReceiver } from "./webhooks.ts";

const TOP_UP_USD = 100;
/** How long the last start runs the queue messages left over from the disruption. */
const LATE_REDELIVERY_MS = 8_000;
/**
 * With ENGINE=postgres a job a kill cut off runs again once pg-boss finds its heartbeat lost (10 s,
 * then the next supervise pass): the late start lasts at least this long after the last kill.
 */
const HEARTBEAT_LOSS_MS = 15_000;
const PROVIDER_VARS = [
  "RESEND_API_KEY",
  "TWILIO_ACCOUNT_SID",
  "TWILIO_AUTH_TOKEN",
  "FCM_SERVICE_ACCOUNT",
  "APNS_PRIVATE_KEY",
  "PRICE_SMS_SEGMENT",
  "DATABASE_URL",
];

/** What a run is. */
export interface RunPlan {
  /** Named in the output. */
  label: string;
  size: ScenarioSize;
  engine: "kv" | "postgres";
  /** Processes of the service on the one data set (ENGINE=postgres for more than one). */
  replicas: number;
  /** The server's database the run uses (fresh); PGlite in the data folder without one. */
  databaseUrl?: string;
  /** The wait for every send to be final after the disruption (ms). */
  timeoutMs: number;
  /** Delivery must resume within this after each recovery (ms). */
  maxRecoveryMs: number;
  /** How long the fake Twilio takes to answer an SMS (ms). */
  twilioLatencyMs: number;
  /** What happens to the service (or its database) while the sends run. */
  disrupt: (world: RunWorld) => Promise<void>;
}

/** The fake Twilio of the run: what it received, and when it last received an SMS. */
export interface Twilio {
  receipts(): TwilioReceipts;
  lastAt(): number;
}

/** What a disruption works with. */
export interface RunWorld {
  services: ServiceProcess[];
  /** A client of service `i`. */
  api(i: number): Api;
  s: Scenario;
  twilio: Twilio;
  problems: string[];
  /** Lines for the recovery summary printed at the end. */
  recoveries: string[];
  maxRecoveryMs: number;
  /** When the last kill or outage happened (late redeliveries and webhook sweeps are waited for after it). */
  lastDisruptionAt: number;
  /** When the sends were fired (disruptions are logged relative to it). */
  firedAt: number;
  /** SMS the failover team's accounts have been handed so far (refused ones too). */
  failoverHanded(): number;
}

/** Runs `plan`; answers the problems found (none: it passed) and the data folder. */
export async function runScenario(plan: RunPlan): Promise<{ problems: string[]; dir: string }> {
  const started = Date.now();
  const dir = await Deno.makeTempDir({ prefix: "crash_test_" });
  const adminToken = `crash-admin-${crypto.randomUUID()}`;
  const credentials = { accountSid: `AC${"c".repeat(32)}`, authToken: crypto.randomUUID().replaceAll("-", "") };
  let lastSmsAt = 0;
  const fakeTwilio = startFakeTwilio({
    ...credentials,
    hold: () => {
      lastSmsAt = Date.now();
      return delay(plan.twilioLatencyMs);
    },
  });
  // The failover team's two accounts, each on a fake Twilio of its own with the same latency.
  const failoverFakes = startFailoverFakes(plan.twilioLatencyMs, plan.size.inactiveEvery, () => {
    lastSmsAt = Date.now();
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
  const channelAccountsKey = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))));
  // The burst spool is Deno KV's (SEND_DEFER_RATE is KV only).
  const spool = plan.engine === "kv";
  // Added to this process's environment; other provider credentials are blanked so that the rest goes to the outbox.
  const serviceEnv = (i: number): Record<string, string> => ({
    ...Object.fromEntries(PROVIDER_VARS.map((name) => [name, ""])),
    ENGINE: plan.engine,
    TWILIO_ACCOUNT_SID: credentials.accountSid,
    TWILIO_AUTH_TOKEN: credentials.authToken,
    TWILIO_BASE_URL: fakeTwilio.url,
    PORT: String(freePort()),
    HOST: "127.0.0.1",
    PGLITE_DIR: `${dir}/pg`,
    KV_PATH: `${dir}/kv-${i}.sqlite3`,
    ADMIN_TOKEN: adminToken,
    OTP_TOKEN_SECRET: `crash-otp-${crypto.randomUUID()}`,
    CHANNEL_ACCOUNTS_KEY: channelAccountsKey,
    DEMO_SEED: "0",
    LOG_LEVEL: "warn",
    // The burst of direct sends (fired at once) goes through the spool: a burst is anything over 20 a second.
    ...(spool ? { SEND_DEFER_RATE: "20" } : {}),
    // The webhook endpoint is on loopback.
    WEBHOOK_ALLOW_PRIVATE: "1",
    ...(plan.databaseUrl ? { DATABASE_URL: plan.databaseUrl } : {}),
  });
  const services = Array.from(
    { length: plan.replicas },
    (_, i) => new ServiceProcess(serviceEnv(i), `${dir}/service-${i}.log`),
  );
  const apis = services.map((service) => new Api(service.baseUrl, adminToken));
  const problems: string[] = [];
  const recoveries: string[] = [];
  console.log(
    `${plan.label}: ${plan.replicas} ${plan.replicas > 1 ? "replicas" : "process"}, ENGINE=${plan.engine}, ` +
      `${plan.size.contacts} contacts (${plan.size.workflow} in the workflow), ` +
      `${plan.databaseUrl ? "PostgreSQL server" : "PGlite"}, data in ${dir}`,
  );
  try {
    const first = Date.now();
    // One first, so that migrations run once; then the others.
    await services[0].start();
    console.log(`service healthy after ${await services[0].waitHealthy(first)} ms`);
    await Promise.all(services.slice(1).map((r) => r.start()));
    await Promise.all(services.slice(1).map((r) => r.waitHealthy(Date.now())));
    const api = apis[0];
    const setupStarted = Date.now();
    const ids = await setUp(api, plan.size, TOP_UP_USD);
    const failover = await setUpFailover(
      api,
      failoverFakes,
      { contacts: plan.size.failover, inactiveEvery: plan.size.inactiveEvery },
      TOP_UP_USD,
    );
    await api.call("POST", "/api/v1/webhooks", {
      key: ids.apiKey,
      body: { url: receiver.url, events: Object.keys(WATCHED) },
      expect: [201],
    });
    console.log(
      `set up ${plan.size.contacts} contacts, templates and the workflow, and the failover team's ` +
        `${plan.size.failover} contacts, in ${Date.now() - setupStarted} ms`,
    );
    const fired = Date.now();
    const [sends, failoverTrigger] = await Promise.all([
      fire(api, ids.apiKey, ids.workflowId),
      fireFailover(api, failover.apiKey),
    ]);
    const s: Scenario = {
      ...ids,
      ...sends,
      failover: { ...failover, trigger: failoverTrigger },
      topUpMicros: TOP_UP_USD * 1_000_000,
      size: plan.size,
    };
    console.log(
      `fired: ${JSON.stringify(s.triggers)}, ${s.direct.length} direct emails and the failover SMS send ` +
        s.failover.trigger,
    );
    if (spool) {
      // The direct emails wait in the spool until their drain job comes due (a second after their slot).
      const spooled = await spooledPages(services[0].baseUrl);
      if (spooled === 0) problems.push("the burst of direct emails did not go through the spool");
      else console.log(`${spooled} spool pages waiting after the burst`);
    }
    const world: RunWorld = {
      services,
      api: (i) => apis[i],
      s,
      twilio,
      problems,
      recoveries,
      maxRecoveryMs: plan.maxRecoveryMs,
      lastDisruptionAt: Date.now(),
      firedAt: fired,
      failoverHanded: () => failoverFakes.requests(),
    };
    await plan.disrupt(world);
    const deadline = Date.now() + plan.timeoutMs;
    while (!await allFinal(api, s)) {
      if (Date.now() > deadline) {
        problems.push(`sends not final ${plan.timeoutMs / 1000} s after the disruption`);
        break;
      }
      await delay(500);
    }
    console.log(`every send final ${Date.now() - fired} ms after firing`);
    const [firstCreate, lastCreate] = failoverFakes.createdBetween().map((at) => at - fired);
    console.log(`the failover accounts' fakes were handed SMS from ${firstCreate} to ${lastCreate} ms after firing`);
    // Nothing may arrive once every send is final (a late redelivered job sending again).
    const before = await newestOutbox(api, s.teamId);
    const smsBefore = fakeTwilio.requests.length + failoverFakes.requests();
    await delay(3_000);
    const after = await newestOutbox(api, s.teamId);
    if (before?.id !== after?.id) problems.push(`messages were still delivered after every send was final`);
    if (fakeTwilio.requests.length + failoverFakes.requests() !== smsBefore) {
      problems.push(`SMS were still sent after every send was final`);
    }
    problems.push(...await checkThroughApi(api, s));
    problems.push(...await checkFailoverThroughApi(api, s.failover));
    await stopAll(services, problems);
    // Queue messages a kill left "running" come back when KV is opened past their 5 s deadline, and pg-boss
    // runs a job again once its heartbeat is lost: one more start runs every late redelivery, which must
    // change nothing.
    await delay(6_000);
    for (const service of services) await service.start();
    await Promise.all(services.map((service) => service.waitHealthy(Date.now())));
    await delay(Math.max(LATE_REDELIVERY_MS, world.lastDisruptionAt + HEARTBEAT_LOSS_MS - Date.now()));
    // Webhook events a kill left staged are relayed by a sweep once they are EVENT_SWEEP_AGE_MS old.
    await receiver.settle(world.lastDisruptionAt + EVENT_SWEEP_AGE_MS + 2 * EVENT_SWEEP_EVERY_MS - Date.now());
    let swept = 0;
    const late = { ok: 0, error: 0 };
    for (const service of services) {
      swept += (await service.logged(SWEPT_MESSAGE)).reduce((n, e) => n + Number(e.events), 0);
      const handled = await jobsHandled(service.baseUrl);
      late.ok += handled.ok;
      late.error += handled.error;
    }
    console.log(`webhooks received: ${receivedSummary(receiver)}; ${swept} events relayed late by the sweep`);
    console.log(`late start: ${late.ok} queue jobs left over from the disruption ran again (${late.error} failed)`);
    problems.push(...(await checkThroughApi(api, s)).map((p) => `after the late redeliveries: ${p}`));
    problems.push(
      ...(await checkFailoverThroughApi(api, s.failover)).map((p) => `after the late redeliveries: ${p}`),
    );
    await stopAll(services, problems);
    const db = await connectDatabase(
      parseConfig({ PGLITE_DIR: `${dir}/pg`, DATABASE_URL: plan.databaseUrl }),
      { max: 2 },
    );
    try {
      problems.push(...await checkStoredData(db.sql, s, twilio.receipts()));
      problems.push(...await checkFailoverStored(db.sql, s.failover, failoverFakes.receipts()));
      problems.push(...await checkWebhooks(db.sql, s, receiver));
    } finally {
      await db.close();
    }
  } catch (err) {
    problems.push(`run stopped: ${err instanceof Error ? err.message : String(err)}`);
    for (const service of services) if (service.running) await service.kill().catch(() => {});
  } finally {
    await fakeTwilio.close();
    await failoverFakes.close();
    await receiver.close();
  }
  console.log("recovery (restart → /healthz ok → delivering again):");
  for (const line of recoveries) console.log(`  ${line}`);
  console.log(`${plan.label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  if (problems.length > 0) {
    for (const [i, service] of services.entries()) {
      console.error(`service ${i} output (last lines):\n${await service.tail()}`);
    }
  }
  return { problems, dir };
}

/** Graceful stops (SIGTERM), one at a time; a stop that does not exit cleanly is a problem. */
async function stopAll(services: ServiceProcess[], problems: string[]): Promise<void> {
  for (const [i, service] of services.entries()) {
    if (!service.running) continue;
    const status = await service.stop();
    if (!status.success) problems.push(`service ${i}: graceful stop exited with code ${status.code}`);
  }
}

/**
 * After a restart or an outage: waits until a message newer than `since` is delivered, or every send
 * is final; answers how long that took from `since`, or "done".
 */
export async function waitForProgress(api: Api, world: RunWorld, since: number): Promise<number | "done"> {
  const deadline = Date.now() + 120_000;
  let lastFinalCheck = 0;
  while (Date.now() < deadline) {
    const newest = await newestOutbox(api, world.s.teamId);
    if (newest && Date.parse(newest.created_at) >= since) return Date.now() - since;
    if (world.twilio.lastAt() >= since) return Date.now() - since;
    if (Date.now() - lastFinalCheck > 1_000) {
      lastFinalCheck = Date.now();
      if (await allFinal(api, world.s)) return "done";
    }
    await delay(100);
  }
  throw new Error("Delivery did not resume within 120 s");
}

/** Records that delivery resumed `progressMs` after a recovery (a problem past maxRecoveryMs). */
export function checkProgress(world: RunWorld, what: string, progressMs: number | "done"): string {
  if (progressMs !== "done" && progressMs > world.maxRecoveryMs) {
    world.problems.push(`${what}: delivery resumed only ${progressMs} ms after it`);
  }
  return progressMs === "done" ? "every send was already final" : `delivering again ${progressMs} ms after it`;
}
