/**
 * Two replicas of the OTP service on one engine: each has its own hot-state objects (buffers,
 * committers) over the shared store, as two processes would, and every case calls both. On Postgres
 * the jobs go to a table written in the unit's transaction, so a job is seen exactly when the unit
 * that enqueued it committed (pg-boss's own enqueue in a transaction is proven by its contract suite,
 * which needs a server; this runs on PGlite too). On KV the jobs go to Deno KV's queue of the same
 * database, unobserved: what KV enqueues with a verify is asserted in verify_effects_test.ts.
 */
import assert from "node:assert/strict";
import type { Config } from "../shared/config.ts";
import type { Deps } from "../shared/deps.ts";
import { kvHotState } from "../shared/engine/kv/hot_state.ts";
import { KvQueue } from "../shared/engine/kv/queue.ts";
import type { HotState } from "../shared/engine/ports.ts";
import { postgresHotState } from "../shared/engine/postgres/hot_state.ts";
import { transactionOf } from "../shared/engine/postgres/unit.ts";
import type { EnqueueOptions, JobQueue, UnitOfWork } from "../shared/engine/queue.ts";
import { KvCommitter } from "../shared/kv.ts";
import { patchTeamSettings } from "../shared/team_settings.ts";
import type { Sql } from "../shared/db.ts";
import { dbTest } from "../shared/testing.ts";
import { GRACE_MS } from "./fraud_guard.ts";
import { openSandbox, type OtpWorld, otpWorld, randomPhone, replicaOf, wrong } from "./testing.ts";

const LOCKED = "Maximum attempts exceeded: session is locked due to too many failed attempts";

/** An event of a committed webhook job. */
interface JobEvent {
  type: string;
  data: Record<string, unknown>;
}

/** Two replicas of one team's service, the events their units committed (Postgres), and the end. */
interface Replicas {
  a: OtpWorld;
  b: OtpWorld;
  /** The webhook events committed so far (of every test); undefined on KV (not observed). */
  events(): Promise<JobEvent[] | undefined>;
  close(): Promise<void>;
}

/** A queue writing each job to a table, in the unit's transaction when there is one. */
class TableQueue implements JobQueue<{ type: string }> {
  #sql: Sql;

  constructor(sql: Sql) {
    this.#sql = sql;
  }

  async enqueue(job: { type: string }, _options?: EnqueueOptions, unit?: UnitOfWork): Promise<void> {
    const db = unit ? transactionOf(unit) : this.#sql;
    await db`insert into otp_replica_test_jobs (job) values (${db.json(job)})`;
  }

  listen(): Promise<void> {
    return Promise.resolve();
  }

  stop(): Promise<void> {
    return Promise.resolve();
  }
}

/** Builds the two replicas of `world` on one engine. */
const ENGINES: Record<string, (world: OtpWorld) => Promise<Replicas>> = {
  kv: async (world) => {
    const kv = await Deno.openKv(":memory:");
    const hots = [kvHotState(kv, new KvCommitter(kv)), kvHotState(kv, new KvCommitter(kv))];
    const queue = new KvQueue<{ type: string }>(kv, new KvCommitter(kv));
    return replicas(world, hots, queue, () => Promise.resolve(undefined), () => kv.close());
  },
  postgres: async (world) => {
    const sql = world.deps.sql;
    await sql`create table if not exists otp_replica_test_jobs (job jsonb not null)`;
    const hots = [postgresHotState(sql), postgresHotState(sql)];
    const events = async () => {
      const rows = await sql<{ job: { type: string; deliveries?: { event: JobEvent }[] } }[]>`
        select job from otp_replica_test_jobs where job->>'type' = 'webhook-deliver'`;
      return rows.flatMap((r) => r.job.deliveries!.map((d) => d.event));
    };
    return replicas(world, hots, new TableQueue(sql), events, () => {});
  },
};

function replicas(
  world: OtpWorld,
  hots: HotState[],
  queue: Deps["queue"],
  events: Replicas["events"],
  end: () => void,
): Replicas {
  return {
    a: replicaOf(world, hots[0], queue),
    b: replicaOf(world, hots[1], queue),
    events,
    async close() {
      for (const hot of hots) await hot.close();
      end();
    },
  };
}

/** Registers `fn` once per engine, named `<name> [<engine>]`, on a new team with a webhook endpoint. */
function replicaTest(
  name: string,
  options: { config?: Partial<Config>; now?: () => number },
  fn: (r: Replicas, world: OtpWorld) => Promise<void>,
): void {
  for (const [engine, open] of Object.entries(ENGINES)) {
    dbTest(`${name} [${engine}]`, async () => {
      const world = await otpWorld(options);
      await world.deps.sql`insert into webhook_endpoints ${
        world.deps.sql({ team_id: world.team.id, url: "https://hooks.example.com/otp", secret: "whsec_test" })
      }`;
      const r = await open(world);
      try {
        await fn(r, world);
      } finally {
        await r.close();
      }
    });
  }
}

/** The types of the events about `sessionId`, when the engine's jobs are observed. */
async function eventsOf(r: Replicas, sessionId: unknown): Promise<string[] | undefined> {
  return (await r.events())?.filter((e) => e.data.session_id === sessionId).map((e) => e.type);
}

replicaTest(
  "a session opened on one replica verifies on another: attempts counted across, the lock seen by both",
  {},
  async (r) => {
    const { token, otps, body } = await openSandbox(r.a, ["sms"], { config: { max_attempts: 3 } });
    const attempts = [];
    for (const replica of [r.b, r.a, r.b]) {
      const res = await replica.post("/verify", { session_token: token, otps: { sms: wrong(otps.sms) } });
      attempts.push([res.status, (await res.json()).attempts_remaining]);
    }
    // The third wrong code, on B, used the last attempt though A counted the second one.
    assert.deepEqual(attempts, [[200, 2], [200, 1], [200, 0]]);
    for (const replica of [r.a, r.b]) {
      const res = await replica.post("/verify", { session_token: token, otps });
      assert.equal(res.status, 400);
      assert.equal((await res.json()).message, LOCKED);
    }
    const events = await eventsOf(r, body.session_id);
    if (events) assert.deepEqual(events, ["otp.locked"]);
  },
);

replicaTest("the right code sent to two replicas at once verifies the session once", {}, async (r) => {
  const { token, otps, body } = await openSandbox(r.a, ["email"]);
  const calls = await Promise.all([r.a, r.b].map((replica) => replica.post("/verify", { session_token: token, otps })));
  const answers = await Promise.all(calls.map((res) => res.json()));
  assert.deepEqual(calls.map((res) => res.status), [200, 200]);
  assert.ok(answers.every((a) => a.session_verified === true));
  const events = await eventsOf(r, body.session_id);
  if (events) assert.deepEqual(events, ["otp.verified"]);
});

replicaTest(
  "a team's active sessions are counted across replicas",
  { config: { OTP_ACTIVE_SESSION_LIMIT: 2 } },
  async (r) => {
    const first = await openSandbox(r.a, ["email"]);
    await openSandbox(r.a, ["email"]);
    const third = await r.b.post("/send", { channels: ["email"], recipients: { email: "x@example.com" } });
    assert.equal(third.status, 429);
    assert.equal((await third.json()).message, "Too many active OTP sessions");
    // A session verified on B is no longer active: A may open another.
    await r.b.post("/verify", { session_token: first.token, otps: first.otps });
    await openSandbox(r.a, ["email"]);
  },
);

const clock = { now: Date.UTC(2030, 0, 1, 12) };

replicaTest(
  "the fraud guard counts verifications and blocks a prefix across replicas",
  { config: { OTP_IP_LIMIT_PER_HOUR: 0, OTP_ACTIVE_SESSION_LIMIT: 0 }, now: () => clock.now },
  async (r, world) => {
    await patchTeamSettings(world.deps.sql, world.team.id, { otp: { fraud_guard: { min_sends: 10 } } });
    const sms = async (replica: OtpWorld, to: string) => {
      const res = await replica.post("/send", { channels: ["sms"], recipients: { sms: to } });
      return { status: res.status, body: await res.json(), to };
    };
    // A range whose users verify (on B) and a range nobody verifies, both sent to through A.
    const legit = [];
    for (let i = 0; i < 12; i++) {
      const to = randomPhone("+4477008");
      const sent = await sms(r.a, to);
      assert.equal(sent.status, 200);
      legit.push(sent);
      assert.equal((await sms(r.a, randomPhone("+4477009"))).status, 200);
    }
    for (const { body, to } of legit.slice(0, 10)) {
      const [message] = await world.deps.sql<{ body: string }[]>`
        select body from outbox_all where team_id = ${world.team.id} and to_address = ${to}`;
      const code = /\b(\d{6})\b/.exec(message.body)![1];
      const res = await r.b.post("/verify", { session_token: body.session_token, otps: { sms: code } });
      assert.equal((await res.json()).verified, true);
    }
    clock.now += GRACE_MS + 60_000;
    assert.equal((await sms(r.a, randomPhone("+4477008"))).status, 200, "verified on B, counted on A");
    const blocked = await sms(r.a, randomPhone("+4477009"));
    assert.equal(blocked.body.code, "otp_fraud_suspected");
    const onB = await sms(r.b, randomPhone("+4477009"));
    assert.equal(onB.status, 403, "the block written by A refuses B's send");
    const events = await r.events();
    if (events) {
      assert.deepEqual(
        events.filter((e) => e.type === "otp.fraud_blocked" && e.data.team_id === world.team.id).length,
        1,
      );
    }
  },
);
