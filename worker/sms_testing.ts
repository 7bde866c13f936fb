/** Fixtures of the delivery tests: an SMS send as dispatch leaves it, and Twilio on loopback. */
import type { Deps, Team } from "../shared/deps.ts";
import { kvHotState } from "../shared/engine/kv/hot_state.ts";
import { KvQueue } from "../shared/engine/kv/queue.ts";
import type { EnqueueOptions } from "../shared/engine/queue.ts";
import { KvCommitter } from "../shared/kv.ts";
import { toMicros } from "../shared/money.ts";
import { startFakeTwilio, type TwilioErrorBody } from "../harness/fakes/fake_servers.ts";
import { createTwilioProvider } from "../shared/providers/twilio.ts";
import type { Provider } from "../shared/providers/types.ts";
import { insertTriggers } from "../shared/sending/records.ts";
import { testSendSpec } from "../shared/sending/testing.ts";
import { newTriggerRecord } from "../shared/sending/trigger_record.ts";
import { upsertTemplate } from "../shared/templates.ts";
import { testTeam } from "../shared/testing.ts";
import { topUp } from "../shared/wallet.ts";
import { createContact } from "../shared/contacts/queries.ts";
import { invalidateEndpointCache } from "../shared/webhook_events.ts";
import type { DispatchState } from "./complete.ts";
import type { DeliverBatchJob } from "./jobs.ts";

/**
 * Deps on a KV database of the test's own (its queue read by the test): the engine's ports are
 * built on it too, so that what a job writes and enqueues lands there.
 */
export function depsOnKv(deps: Deps, kv: Deno.Kv): Deps {
  const committer = new KvCommitter(kv);
  const hot = kvHotState(kv, committer);
  return {
    ...deps,
    kv,
    committer,
    sendState: hot.sendState,
    atomically: hot.atomically,
    queue: new KvQueue(kv, committer),
  };
}

/** Deps whose queue also hands each job enqueued, with its options, to `seen` (then enqueues it). */
export function seeingEnqueues(deps: Deps, seen: (job: unknown, options: EnqueueOptions) => void): Deps {
  const queue = deps.queue;
  return {
    ...deps,
    queue: {
      ...queue,
      enqueue(job, options = {}, unit) {
        seen(job, options);
        return queue.enqueue(job, options, unit);
      },
      listen: (handler) => queue.listen(handler),
      stop: () => queue.stop(),
    },
  };
}

/** Deps whose every channel goes to `provider`. */
export function withProvider(deps: Deps, provider: Provider): Deps {
  return { ...deps, providers: { outbox: deps.providers.outbox, get: () => provider } };
}

/**
 * A recorded SMS send to tag `vip` with one batch covering `contacts`, as dispatch would leave it:
 * to a new team funded with $10, or (`within`) to new contacts of `within.team` tagged `within.tag`.
 */
export async function smsFanOut(deps: Deps, contacts: number, within?: { team: Team; tag: string; phone: number }) {
  const team = within?.team ?? (await testTeam(deps)).team;
  const tag = within?.tag ?? "vip";
  if (!within) {
    await topUp(deps.sql, team.id, toMicros(10));
    await upsertTemplate(deps.sql, team.id, "sms", "hi", { body: "Hi {{contact_first_name}}" });
  }
  const ids: string[] = [];
  for (let i = 0; i < contacts; i++) {
    const c = await createContact(deps.sql, team.id, {
      email: `p${i}.${crypto.randomUUID().slice(0, 8)}@example.com`,
      first_name: `P${i}`,
      tags: [tag],
      custom_fields: { phone: `+1415555${String((within?.phone ?? 2000) + i)}` },
    });
    ids.push(c.id);
  }
  ids.sort();
  const spec = testSendSpec(
    team.id,
    { sandbox: false, recipient_type: "tag", recipient: { type: "tag", tags: [tag] } },
    "hi",
  );
  await insertTriggers(deps.sql, [spec], "processing", Date.now());
  const state: DispatchState = { team_id: team.id, filter: { tags_all: [tag] }, after: null, batches: 1, done: true };
  await deps.atomically(async (unit) => {
    await deps.sendState.putTrigger(newTriggerRecord(spec), unit);
    await deps.sendState.putDispatch(spec.executions[0].id, state, null, unit);
  });
  const job: DeliverBatchJob = {
    type: "deliver-batch",
    id: crypto.randomUUID(),
    trigger_id: spec.trigger_id,
    execution_id: spec.executions[0].id,
    batch_no: 0,
    after: null,
    until: ids[ids.length - 1],
    filter: { tags_all: [tag] },
    attempt: 0,
  };
  return { team, spec, job };
}

/** The trigger row: its status and counters. */
export async function triggerRow(deps: Deps, id: string) {
  const [row] = await deps.sql`select status, total_contacts, sent, failed, filtered from triggers where id = ${id}`;
  return { ...row };
}

/** The trigger row to expect: its status, then total_contacts, sent, failed and filtered. */
export function counts(status: string, total_contacts: number, sent: number, failed: number, filtered: number) {
  return { status, total_contacts, sent, failed, filtered };
}

/** A fake Twilio API and the real Twilio provider pointed at it. */
export function twilioOnLoopback(
  options: { errors?: Record<string, TwilioErrorBody>; hold?: (to: string) => Promise<void> | undefined },
) {
  const credentials = { accountSid: `AC${"0".repeat(32)}`, authToken: "f".repeat(32) };
  const server = startFakeTwilio({ ...credentials, ...options });
  const provider = createTwilioProvider({ ...credentials, baseUrl: server.url });
  const requestsTo = (to: string) => server.requests.filter((r) => new URLSearchParams(r.body).get("To") === to).length;
  return { server, provider, requestsTo };
}

/** Gives a team an active webhook endpoint for every event type. */
export async function listenToAll(deps: Deps, teamId: string): Promise<void> {
  await deps.sql`insert into webhook_endpoints (team_id, url, secret) values (${teamId}, 'https://h.example.com', 'k')`;
  invalidateEndpointCache(teamId);
}
