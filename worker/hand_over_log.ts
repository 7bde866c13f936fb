import { Batcher } from "../shared/batcher.ts";
import type { Db } from "../shared/db.ts";
import type { Deps } from "../shared/deps.ts";
import { type StagedEvent, stageEvents } from "../shared/event_outbox.ts";
import { type Listeners, wanted } from "../shared/webhook_events.ts";
import { messageEvent, outcomeOf } from "./events.ts";
import type { HandOverLog, Outcome, ToSend } from "./handoff.ts";

/**
 * The most claims one UPDATE carries. A claimed message waits for its turn on the CPU to be written
 * to its provider (a Twilio request costs about 0.3 ms to build), so a group of every hand-over in
 * flight (up to SEND_CONCURRENCY times the passes running) left dozens claimed and not yet written
 * when the process was killed, each then failed as "may have been sent" although it never left. A
 * few at a time keeps that to a few, for one more small UPDATE per few messages.
 */
export const CLAIMS_AT_ONCE = 8;

/** A message about to be handed over; `claimed` is set by the group's UPDATE. */
interface Claim {
  id: string;
  claimed: boolean;
}

/** A provider's answer to record; `recorded` is set when the group marked the message sent. */
interface Answer {
  t: ToSend;
  outcome: Outcome;
  recorded: boolean;
}

/**
 * The hand-over log of one delivery pass (see HandOverLog): the claims of the hand-overs about to be
 * made together are one UPDATE, and the answers that arrive together one transaction, so a pass
 * costs a few commits per window of concurrent hand-overs instead of two per message (the provider's
 * call, tens of milliseconds, is what the claims and answers of the others gather behind). Grouping
 * changes no rule: a message is claimed before its call, never when another pass holds it; an answer
 * that cannot be recorded is left to the pass's UPDATE, which refunds a refusal in the same
 * transaction; if the pass dies first, a later one settles what it claimed through the provider's log.
 * A message recorded sent here stages its webhook event in the same transaction, into `staged`.
 */
export function handOverLog(deps: Deps, listeners: Listeners, staged: StagedEvent[]): HandOverLog {
  const claims = new Batcher<Claim>((group) => claim(deps, group), { maxWeight: Infinity, maxCount: CLAIMS_AT_ONCE });
  const answers = new Batcher<Answer>((group) => answer(deps, listeners, staged, group), { maxWeight: Infinity });
  return {
    now: deps.now,
    async handing(t) {
      const c: Claim = { id: t.message.id, claimed: false };
      await claims.add(c);
      return c.claimed;
    },
    async answered(t, outcome) {
      const a: Answer = { t, outcome, recorded: false };
      await answers.add(a);
      return a.recorded;
    },
    async recordedIds(ids) {
      // "provider <> 'outbox'" lets Postgres use the index of migration 005.
      const rows = await deps.sql<{ id: string }[]>`
        select provider_message_id as id from messages
        where provider_message_id = any(${ids}) and provider <> 'outbox'`;
      return new Set(rows.map((r) => r.id));
    },
  };
}

/** Claims the messages no pass holds, in one statement. */
async function claim(deps: Deps, group: Claim[]): Promise<void> {
  const rows = await deps.sql<{ id: string }[]>`
    update messages set handed_at = ${new Date(deps.now())}
    where id = any(${group.map((c) => c.id)}::text[]) and status = 'pending' and handed_at is null
    returning id`;
  const claimed = new Set(rows.map((r) => r.id));
  for (const c of group) c.claimed = claimed.has(c.id);
}

/**
 * Records the messages sent (with their webhook events, in one transaction when some endpoint wants
 * them) and frees those the provider did not take (a temporary failure), so the next try hands them
 * over again. A refusal is left to the pass's UPDATE.
 */
async function answer(deps: Deps, listeners: Listeners, staged: StagedEvent[], group: Answer[]): Promise<void> {
  const sent = group.filter((a) => a.outcome.ok);
  const notTaken = group.filter((a) => !a.outcome.ok && a.outcome.temporary).map((a) => a.t.message.id);
  const reporting = sent.some((a) => wanted(listeners, a.t.p.team_id, "message.sent"));
  const record = async (db: Db) => {
    const landed = await markSent(db, sent, deps.now());
    if (notTaken.length > 0) await db`update messages set handed_at = null where id = any(${notTaken}::text[])`;
    const events = sent.filter((a) => landed.has(a.t.message.id)).map((a) =>
      messageEvent(outcomeOf(a.t.p, a.t.message.id, "sent", { provider_message_id: providerId(a.outcome) }))
    );
    return { landed, events: reporting ? await stageEvents(db, listeners, events, deps.now()) : [] };
  };
  const { landed, events } = reporting ? await deps.sql.begin(record) : await record(deps.sql);
  for (const a of sent) a.recorded = landed.has(a.t.message.id);
  staged.push(...events);
}

/** Marks the pending ones of `sent` sent, in one statement; answers the ids it marked. */
async function markSent(db: Db, sent: Answer[], now: number): Promise<Set<string>> {
  if (sent.length === 0) return new Set();
  const rows = await db<{ id: string }[]>`
    update messages m set status = 'sent', provider_message_id = v.provider_message_id,
      sent_at = ${new Date(now)}, handed_at = null, ${withSentWith(db)}
    from unnest(${sent.map((a) => a.t.message.id)}::text[], ${sent.map((a) => providerId(a.outcome))}::text[],
      ${sent.map((a) => sentAttempts(a.outcome))}::text[], ${sent.map((a) => sentProvider(a.outcome))}::text[])
      as v(id, provider_message_id, attempts, provider)
    where m.id = v.id and m.status = 'pending'
    returning m.id`;
  return new Set(rows.map((r) => r.id));
}

/**
 * The columns a message sent through failover takes from `v(attempts, provider)` (see SentWith):
 * its attempts appended, its provider set; a message without them keeps its own.
 */
export function withSentWith(db: Db) {
  return db`attempts = case when v.attempts is null then m.attempts
      else coalesce(m.attempts, '[]'::jsonb) || v.attempts::jsonb end,
    provider = coalesce(v.provider, m.provider)`;
}

/** The attempts a sent outcome carries, as JSON text (null when none). */
export function sentAttempts(outcome: Outcome): string | null {
  return outcome.ok && outcome.sentWith ? JSON.stringify(outcome.sentWith.attempts) : null;
}

/** The provider a sent outcome names (null when it does not). */
export function sentProvider(outcome: Outcome): string | null {
  return outcome.ok && outcome.sentWith ? outcome.sentWith.provider : null;
}

/** The provider's id of a sent outcome's message (null when not sent). */
export function providerId(outcome: Outcome): string | null {
  return outcome.ok ? outcome.providerMessageId : null;
}
