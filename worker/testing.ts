import assert from "node:assert/strict";
import { createService } from "../main.ts";
import { createContact, type NewContact } from "../shared/contacts/queries.ts";
import type { Config } from "../shared/config.ts";
import type { Deps, Team } from "../shared/deps.ts";
import { upsertIdentity } from "../shared/identities.ts";
import { toMicros, toUsd } from "../shared/money.ts";
import type { Channel } from "../shared/providers/types.ts";
import { type TemplateInput, upsertTemplate } from "../shared/templates.ts";
import { jsonRequest, testDeps, testTeam } from "../shared/testing.ts";
import type { TeamKeys } from "../shared/teams.ts";
import { balanceMicros, topUp } from "../shared/wallet.ts";
import { startWorker } from "./queue.ts";
import { WEBHOOK_JOB_TYPE } from "../shared/webhook_events.ts";

/** A JSON answer, read freely by the tests. */
// deno-lint-ignore no-explicit-any
type Answer = any;

/** A team with the service and its worker running, and helpers to drive them. */
export interface SendingFixture {
  deps: Deps;
  app: ReturnType<typeof createService>;
  team: Team;
  keys: TeamKeys;
  /** POST a JSON body with the live key (or `key`). */
  post(path: string, body: unknown, key?: string, headers?: Record<string, string>): Promise<Response>;
  /** GET with the live key (or `key`). */
  get(path: string, key?: string): Promise<Response>;
  /** POST like `post`; the status and the parsed body. */
  send(path: string, body: unknown, key?: string): Promise<{ status: number; body: Answer }>;
  /**
   * Asserts a send's answer has status `status` (201 unless given) and waits until its trigger is
   * completed or failed: the answer's body, its trigger id and the trigger.
   */
  finished(res: Response, status?: number): Promise<{ body: Answer; trigger_id: string; trigger: TriggerBody }>;
  template(channel: Channel, key: string, input: TemplateInput): Promise<void>;
  contact(input: Partial<NewContact>): Promise<{ id: string; external_id: string; email: string }>;
  /** Registers a push device token of a contact. */
  device(contactId: string, token: string, platform?: string): Promise<void>;
  /** Adds USD to the wallet. */
  fund(usd: number): Promise<void>;
  /** The wallet balance in USD. */
  balance(): Promise<number>;
  /** GET /triggers/{id} until it is completed or failed (90 s at most); its body. */
  waitForTrigger(triggerId: string): Promise<TriggerBody>;
  /** The outbox messages of a trigger, oldest first. */
  outbox(
    triggerId: string,
  ): Promise<{ to_address: string; channel: string; subject: string | null; body: string | null }[]>;
}

/** A trigger as GET /triggers/{id} answers it. */
export interface TriggerBody {
  id: string;
  status: string;
  summary: { total_contacts: number; sent: number; failed: number; filtered: number };
  [key: string]: unknown;
}

/**
 * A fresh team (plan `plan`) on the shared test runtime, with the worker started; `around` swaps in
 * parts of the test's own (a clock, with a queue of its own for a worker that reads it).
 */
export async function sendingFixture(
  plan: Team["plan"] = "pro",
  config: Partial<Config> = {},
  around: (deps: Deps) => Deps | Promise<Deps> = (deps) => deps,
): Promise<SendingFixture> {
  return await sendingFixtureOn(await around(await testDeps(config)), plan);
}

/**
 * A fresh team on `deps`, with a worker consuming `deps.queue` (a queue of the test's own gets a
 * worker of its own, with these deps' providers).
 */
export async function sendingFixtureOn(deps: Deps, plan: Team["plan"] = "pro"): Promise<SendingFixture> {
  startWorker(deps);
  const app = createService(deps);
  const { team, keys } = await testTeam(deps, plan);
  const fixture: SendingFixture = {
    deps,
    app,
    team,
    keys,
    post: (path, body, key = keys.live, headers = {}) =>
      Promise.resolve(app.request(path, jsonRequest("POST", body, { "X-API-Key": key, ...headers }))),
    get: (path, key = keys.live) => Promise.resolve(app.request(path, { headers: { "X-API-Key": key } })),
    async send(path, body, key) {
      const res = await fixture.post(path, body, key);
      return { status: res.status, body: await res.json() };
    },
    async finished(res, status = 201) {
      const body = await res.json();
      assert.equal(res.status, status, JSON.stringify(body));
      return { body, trigger_id: body.trigger_id, trigger: await fixture.waitForTrigger(body.trigger_id) };
    },
    async device(contactId, token, platform = "android") {
      await deps.sql`insert into device_tokens ${
        deps.sql({ team_id: team.id, contact_id: contactId, token, platform })
      }`;
    },
    async template(channel, key, input) {
      await upsertTemplate(deps.sql, team.id, channel, key, input);
    },
    async contact(input) {
      const email = input.email ?? `c.${crypto.randomUUID().slice(0, 12)}@example.com`;
      return await createContact(deps.sql, team.id, { ...input, email });
    },
    async fund(usd) {
      await topUp(deps.sql, team.id, toMicros(usd));
    },
    async balance() {
      return toUsd(await balanceMicros(deps.sql, team.id));
    },
    async waitForTrigger(triggerId) {
      // Only a trigger that never finishes should fail here: a test of 200 sends of 5 messages can take
      // well over 20 s when the parallel suite shares a slow machine, so the deadline leaves room.
      const deadline = Date.now() + TRIGGER_DEADLINE_MS;
      let last: TriggerBody | undefined;
      while (Date.now() < deadline) {
        const res = await fixture.get(`/api/v1/triggers/${triggerId}`);
        last = await res.json();
        if (res.status === 200 && (last!.status === "completed" || last!.status === "failed")) return last!;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`Trigger ${triggerId} did not finish: ${JSON.stringify(last)}`);
    },
    async outbox(triggerId) {
      const rows = await deps.sql<
        { to_address: string; channel: string; subject: string | null; body: string | null }[]
      >`
        select to_address, channel, subject, body from outbox_all where trigger_id = ${triggerId}
        order by created_at, id`;
      return [...rows];
    },
  };
  return fixture;
}

/** How long waitForTrigger waits before it calls a trigger stuck. */
const TRIGGER_DEADLINE_MS = 90_000;

/** A push token of `length` random [A-Za-z0-9]: no index can compress it under its 2,704-byte rows. */
export function randomToken(length: number): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  return Array.from(crypto.getRandomValues(new Uint8Array(length)), (b) => chars[b % chars.length]).join("");
}

/**
 * Runs `fn` while Postgres refuses any message row to `address` (a constraint of the test's own, on
 * that address alone, so tests running beside it are not affected). DDL takes no bind parameters: the
 * address is written in as a quoted literal.
 */
export async function withMessagesRefusedTo<T>(deps: Deps, address: string, fn: () => Promise<T>): Promise<T> {
  const name = `refuse_${crypto.randomUUID().replaceAll("-", "")}`;
  const literal = `'${address.replaceAll("'", "''")}'`;
  await deps.sql`alter table messages add constraint ${deps.sql(name)}
    check (to_address is distinct from ${deps.sql.unsafe(literal)}) not valid`;
  try {
    return await fn();
  } finally {
    await deps.sql`alter table messages drop constraint ${deps.sql(name)}`;
  }
}

/**
 * Deps on which an enqueue of webhook jobs fails, as if the process stopped right after the change
 * those events report committed.
 */
export function stoppingBeforeWebhooks(deps: Deps): Deps {
  const queue: Deps["queue"] = {
    enqueue: (job, options, unit) =>
      job.type === WEBHOOK_JOB_TYPE ? Promise.reject(new Error("stopped")) : deps.queue.enqueue(job, options, unit),
    listen: (handler) => deps.queue.listen(handler),
    stop: () => deps.queue.stop(),
  };
  return { ...deps, queue };
}

export { upsertIdentity };
