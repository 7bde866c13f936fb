/**
 * Multi-replica test (`deno task test:replicas`, needs DATABASE_URL): starts three replicas of the
 * service (`main.ts`, every role) with ENGINE=postgres on one fresh database, calls each replica
 * directly, and checks that they are one service:
 * - an OTP session opened on one replica verifies on another; failed attempts count across replicas
 *   and the lock is seen by all;
 * - an Idempotency-Key raced to every replica makes one send;
 * - the free plan's hourly request limit holds across replicas (at most 10 % over);
 * - a scheduled SMS is delivered once, and not early;
 * - a fan-out is delivered exactly once across replicas;
 * - a replica killed (SIGKILL) right after accepting a fan-out, and another killed in the middle of
 *   one, lose nothing and duplicate nothing (SMS through the real Twilio client to a fake Twilio here).
 * Exits 1 with the problems found.
 */
import postgres from "postgres";
import { startFakeTwilio } from "../fakes/fake_servers.ts";
import { delay, freePort, freshDatabase, ServiceProcess } from "../crash/service.ts";
import { Api } from "../crash/scenario.ts";
import { MAY_HAVE_SENT } from "../crash/verify.ts";

const env = Deno.env.toObject();
const REPLICAS = 3;
/** Contacts of each fan-out. */
const FANOUT = Number(env.REPLICAS_FANOUT ?? 600);
const TWILIO_LATENCY_MS = 20;

/** What one check found wrong (empty: it passed). */
type Check = (world: World) => Promise<string[]>;

interface World {
  replicas: ServiceProcess[];
  apis: Api[];
  key: string;
  freeKey: string;
  teamId: string;
  twilio: ReturnType<typeof startFakeTwilio>;
  sql: postgres.Sql;
}

/** SMS the fake Twilio was asked to create, by recipient. */
function smsTo(world: World): Map<string, number> {
  const received = new Map<string, number>();
  for (const r of world.twilio.requests.filter((r) => r.method === "POST")) {
    const to = new URLSearchParams(r.body).get("To") ?? "";
    received.set(to, (received.get(to) ?? 0) + 1);
  }
  return received;
}

function phone(n: number): string {
  return `+1555${String(n).padStart(7, "0")}`;
}

const otpAcrossReplicas: Check = async ({ apis, key }) => {
  const problems: string[] = [];
  const [a, b, c] = apis;
  const sent = await a.call<{ session_token: string; sandbox_otps: { sms: string } }>("POST", "/api/v1/otp/send", {
    key,
    body: { channels: ["sms"], recipients: { sms: phone(9_000_001) }, sandbox_mode: true, config: { max_attempts: 3 } },
  });
  const wrong = sent.sandbox_otps.sms === "000000" ? "111111" : "000000";
  const verify = (api: Api, code: string) =>
    api.call<{ verified: boolean; attempts_remaining?: number }>("POST", "/api/v1/otp/verify", {
      key,
      body: { session_token: sent.session_token, otps: { sms: code } },
      expect: [200, 400],
    });
  const remaining = [];
  for (const api of [b, c, a]) remaining.push((await verify(api, wrong)).attempts_remaining);
  if (JSON.stringify(remaining) !== "[2,1,0]") {
    problems.push(
      `OTP: attempts remaining after wrong codes on B, C, A were ${JSON.stringify(remaining)}, not [2,1,0]`,
    );
  }
  for (const [i, api] of apis.entries()) {
    const after = await verify(api, sent.sandbox_otps.sms);
    if (after.verified) problems.push(`OTP: replica ${i} verified a locked session`);
  }
  const second = await b.call<{ session_token: string; sandbox_otps: { sms: string } }>("POST", "/api/v1/otp/send", {
    key,
    body: { channels: ["sms"], recipients: { sms: phone(9_000_002) }, sandbox_mode: true },
  });
  const ok = await c.call<{ verified: boolean }>("POST", "/api/v1/otp/verify", {
    key,
    body: { session_token: second.session_token, otps: { sms: second.sandbox_otps.sms } },
  });
  if (!ok.verified) problems.push("OTP: a session opened on B did not verify on C");
  return problems;
};

const idempotencyRace: Check = async (world) => {
  const to = phone(9_100_001);
  const idempotencyKey = crypto.randomUUID();
  const answers = await Promise.all(world.replicas.flatMap((r) =>
    [0, 1].map(async () => {
      const res = await fetch(`${r.baseUrl}/api/v1/sms/send`, {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-API-Key": world.key, "Idempotency-Key": idempotencyKey },
        body: JSON.stringify({ recipient_type: "direct_sms", direct_phone: to, template_key: "replicas-sms" }),
      });
      return { status: res.status, body: await res.json() as { trigger_id?: string } };
    })
  ));
  const triggers = new Set(answers.filter((a) => a.status === 201).map((a) => a.body.trigger_id));
  const problems: string[] = [];
  if (triggers.size !== 1) problems.push(`Idempotency: ${triggers.size} different triggers for one key`);
  const others = answers.filter((a) => a.status !== 201 && a.status !== 409);
  if (others.length) problems.push(`Idempotency: unexpected answers ${JSON.stringify(others.map((o) => o.status))}`);
  await until(() => (smsTo(world).get(to) ?? 0) >= 1, 30_000);
  await delay(2_000);
  const n = smsTo(world).get(to) ?? 0;
  if (n !== 1) problems.push(`Idempotency: ${n} SMS for one key`);
  return problems;
};

const hourlyLimit: Check = async (world) => {
  // The free plan allows 100 requests an hour per key.
  let allowed = 0;
  const tries = 180;
  for (let i = 0; i < tries; i += REPLICAS) {
    const statuses = await Promise.all(
      world.replicas.map((r) =>
        fetch(`${r.baseUrl}/api/v1/contacts?limit=1`, { headers: { "X-API-Key": world.freeKey } }).then(async (res) => {
          await res.body?.cancel();
          return res.status;
        })
      ),
    );
    allowed += statuses.filter((s) => s === 200).length;
  }
  return allowed > 110 || allowed < 100
    ? [`Rate limit: ${allowed} of ${tries} requests allowed across replicas (limit 100, at most 10 % over)`]
    : [];
};

const scheduledOnce: Check = async (world) => {
  const to = phone(9_200_001);
  const dueAt = Date.now() + 4_000;
  await world.apis[1].call("POST", "/api/v1/sms/send", {
    key: world.key,
    body: {
      recipient_type: "direct_sms",
      direct_phone: to,
      template_key: "replicas-sms",
      triggerAt: new Date(dueAt).toISOString(),
    },
  });
  await until(() => (smsTo(world).get(to) ?? 0) >= 1, 30_000);
  // Seen at most one poll after Twilio got it: seen before the due time is certainly early.
  const seenAt = Date.now();
  await delay(3_000);
  const problems: string[] = [];
  const n = smsTo(world).get(to) ?? 0;
  if (n !== 1) problems.push(`Scheduled: ${n} SMS`);
  if (seenAt < dueAt) problems.push(`Scheduled: sent at least ${dueAt - seenAt} ms early`);
  return problems;
};

/** A tag of FANOUT new contacts with phones from `base`. */
async function taggedContacts(world: World, tag: string, base: number): Promise<string[]> {
  const phones = Array.from({ length: FANOUT }, (_, i) => phone(base + i));
  for (let start = 0; start < FANOUT; start += 500) {
    const contacts = phones.slice(start, start + 500).map((p, i) => ({
      external_id: `${tag}-${start + i}`,
      email: `${tag}-${start + i}@example.com`,
      phone: p,
      tags: [tag],
    }));
    await world.apis[0].call("POST", "/api/v1/contacts/bulk", { key: world.key, body: { contacts } });
  }
  return phones;
}

async function fanOut(world: World, api: Api, tag: string): Promise<string> {
  const answer = await api.call<{ trigger_id: string }>("POST", "/api/v1/sms/send", {
    key: world.key,
    body: { recipient_type: "tag", tag: [tag], template_key: "replicas-sms" },
  });
  return answer.trigger_id;
}

/** Problems with a finished fan-out: each phone one SMS, the trigger completed with exact counts. */
async function checkFanOut(world: World, triggerId: string, phones: string[], label: string): Promise<string[]> {
  const problems: string[] = [];
  const finished = await until(async () => {
    // Replica 0 is never the one killed.
    const t = await world.apis[0].call<{ status: string }>("GET", `/api/v1/triggers/${triggerId}`, { key: world.key });
    return t.status === "completed" || t.status === "failed";
  }, 180_000).then(() => true, () => false);
  if (!finished) problems.push(`${label}: trigger ${triggerId} not finished within 180 s`);
  const received = smsTo(world);
  const rows = await world.sql<{ to_address: string; status: string; error: string | null }[]>`
    select to_address, status, error from messages where trigger_id = ${triggerId}`;
  // A killed replica may have claimed a few messages and died before writing them to Twilio: each is
  // failed as possibly sent, never handed over again (docs/sending.md), as the crash test allows too,
  // provided Twilio never got it.
  const unsure = new Set(
    rows.filter((r) => r.status === "failed" && r.error === MAY_HAVE_SENT && !received.get(r.to_address))
      .map((r) => r.to_address),
  );
  if (unsure.size > 0) {
    console.log(`     ${label}: ${unsure.size} failed as possibly sent, none of them reached Twilio`);
  }
  const missing = phones.filter((p) => !received.get(p) && !unsure.has(p)).length;
  const twice = phones.filter((p) => (received.get(p) ?? 0) > 1).length;
  if (missing) problems.push(`${label}: ${missing} of ${phones.length} contacts got no SMS`);
  if (twice) problems.push(`${label}: ${twice} contacts got more than one SMS`);
  const sent = rows.filter((r) => r.status === "sent").length;
  if (rows.length !== phones.length || sent + unsure.size !== phones.length) {
    problems.push(
      `${label}: ${rows.length} message rows, ${sent} sent and ${unsure.size} possibly sent, for ${phones.length} contacts`,
    );
  }
  return problems;
}

const fanOutOnce: Check = async (world) => {
  const phones = await taggedContacts(world, "fan-once", 1_000_000);
  return await checkFanOut(world, await fanOut(world, world.apis[0], "fan-once"), phones, "Fan-out");
};

const killAfterAccept: Check = async (world) => {
  const phones = await taggedContacts(world, "fan-kill-accept", 2_000_000);
  const victim = world.replicas[1];
  const triggerId = await fanOut(world, world.apis[1], "fan-kill-accept");
  await victim.kill();
  const problems = await checkFanOut(world, triggerId, phones, "Kill after accept");
  await victim.start();
  await victim.waitHealthy(Date.now());
  return problems;
};

const killMidFanOut: Check = async (world) => {
  const phones = await taggedContacts(world, "fan-kill-mid", 3_000_000);
  const triggerId = await fanOut(world, world.apis[0], "fan-kill-mid");
  await until(() => phones.some((p) => smsTo(world).has(p)), 60_000);
  // Every replica may be working on it: kill one in the middle.
  const victim = world.replicas[2];
  await victim.kill();
  const problems = await checkFanOut(world, triggerId, phones, "Kill mid fan-out");
  await victim.start();
  await victim.waitHealthy(Date.now());
  return problems;
};

async function until(ready: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!await ready()) {
    if (Date.now() > deadline) throw new Error(`Cannot see it happen within ${timeoutMs} ms`);
    await delay(100);
  }
}

async function main(): Promise<number> {
  if (!env.DATABASE_URL) {
    console.error("replicas: set DATABASE_URL to a PostgreSQL server (the replicas share it)");
    return 1;
  }
  const database = await freshDatabase("replicas", env.DATABASE_URL);
  const dir = await Deno.makeTempDir({ prefix: "replicas_" });
  const adminToken = `replicas-admin-${crypto.randomUUID()}`;
  const credentials = { accountSid: `AC${"d".repeat(32)}`, authToken: crypto.randomUUID().replaceAll("-", "") };
  const twilio = startFakeTwilio({ ...credentials, hold: () => delay(TWILIO_LATENCY_MS) });
  const shared = {
    ENGINE: "postgres",
    DATABASE_URL: database.url,
    ADMIN_TOKEN: adminToken,
    OTP_TOKEN_SECRET: `replicas-otp-${crypto.randomUUID()}`,
    TWILIO_ACCOUNT_SID: credentials.accountSid,
    TWILIO_AUTH_TOKEN: credentials.authToken,
    TWILIO_BASE_URL: twilio.url,
    RESEND_API_KEY: "",
    HOST: "127.0.0.1",
    DEMO_SEED: "0",
    LOG_LEVEL: "warn",
  };
  const replicas = Array.from(
    { length: REPLICAS },
    (_, i) => new ServiceProcess({ ...shared, PORT: String(freePort()) }, `${dir}/replica-${i}.log`),
  );
  const apis = replicas.map((r) => new Api(r.baseUrl, adminToken));
  const sql = postgres(database.url, { max: 2, onnotice: () => {} });
  const problems: string[] = [];
  try {
    // One first, so that migrations run once; then the others.
    await replicas[0].start();
    await replicas[0].waitHealthy(Date.now());
    await Promise.all(replicas.slice(1).map((r) => r.start()));
    await Promise.all(replicas.slice(1).map((r) => r.waitHealthy(Date.now())));
    const { team, keys } = await apis[0].call<{ team: { id: string }; keys: { live: string } }>(
      "POST",
      "/admin/v1/teams",
      { body: { name: "replicas", plan: "enterprise" } },
    );
    await apis[0].call("POST", `/admin/v1/teams/${team.id}/wallet/topup`, { body: { amount: 1_000 } });
    await apis[0].call("PUT", `/admin/v1/teams/${team.id}/templates/sms/replicas-sms`, {
      body: { body: "Hello from the replicas" },
    });
    const free = await apis[0].call<{ keys: { live: string } }>("POST", "/admin/v1/teams", {
      body: { name: "replicas-free", plan: "free" },
    });
    const world: World = { replicas, apis, key: keys.live, freeKey: free.keys.live, teamId: team.id, twilio, sql };
    const checks: [string, Check][] = [
      ["OTP across replicas", otpAcrossReplicas],
      ["Idempotency-Key raced to every replica", idempotencyRace],
      ["hourly request limit across replicas", hourlyLimit],
      ["scheduled send once, not early", scheduledOnce],
      ["fan-out exactly once", fanOutOnce],
      ["replica killed right after accepting a fan-out", killAfterAccept],
      ["replica killed in the middle of a fan-out", killMidFanOut],
    ];
    for (const [name, check] of checks) {
      const started = Date.now();
      const found = await check(world).catch((err) => [`${name}: ${err instanceof Error ? err.message : err}`]);
      console.log(`${found.length ? "FAIL" : "ok  "} ${name} (${Date.now() - started} ms)`);
      problems.push(...found);
    }
  } finally {
    await Promise.all(replicas.map((r) => r.kill().catch(() => {})));
    await sql.end();
    await twilio.close();
    await database.drop();
  }
  for (const p of problems) console.error(`  - ${p}`);
  console.log(
    problems.length ? `replicas: ${problems.length} problems (logs in ${dir})` : "replicas: all checks passed",
  );
  if (!problems.length) await Deno.remove(dir, { recursive: true });
  return problems.length ? 1 : 0;
}

if (import.meta.main) Deno.exit(await main());
