/**
 * The delivery pass's hand-over for teams with channel accounts of their own: each message goes
 * through sendWithFailover() over the team's accounts (the service's default provider last, when
 * one is configured: the outbox is no failover target), and its row records, before each
 * hand-over, which account it is being handed to. A pass that dies mid-failover is resumed by
 * asking only that account (its log, or the same idempotent request), never another: a second
 * provider must not deliver what the first may have delivered.
 */
import type { Deps } from "../shared/deps.ts";
import { asJson } from "../shared/db.ts";
import { log } from "../shared/log.ts";
import { type AccountHolders, holdersAmong } from "../shared/channel_accounts.ts";
import { failoverAccounts } from "../shared/providers/account_providers.ts";
import { CircuitBreakers } from "../shared/providers/circuit_breaker.ts";
import {
  type Attempt,
  type FailoverAccount,
  type FailoverResult,
  sendWithFailover,
} from "../shared/providers/failover.ts";
import type { ProviderError } from "../shared/providers/types.ts";
import type { Prepared } from "./prepare.ts";
import {
  failure,
  HAND_OVER_WINDOW_MS,
  type HandOverContext,
  heldElsewhere,
  mayHaveSentReason,
  type Outcome,
  settleAbandoned,
  type ToSend,
} from "./handoff.ts";

/** The circuit of each account this process sends through (one set, shared by every pass). */
export const breakers = new CircuitBreakers();

/** Where a team's messages of one channel go: its accounts in order, the default last. */
interface Route {
  accounts: FailoverAccount[];
  failoverOnTimeout: boolean;
}

/**
 * The (team, channel) pairs of the pass's live messages that have channel accounts (see
 * holdersAmong). Read once per pass, before its recording transaction: it decides both how a
 * message is recorded (deliver.ts) and how it is handed over.
 */
export async function accountHolders(deps: Deps, items: readonly Prepared[]): Promise<AccountHolders> {
  const live = items.filter((p) => !p.sandbox && p.message && !p.outcome);
  return await holdersAmong(deps, [...new Set(live.map((p) => p.team_id))]);
}

/**
 * Gives each live message of a team with channel accounts for its channel the failover hand-over
 * (and any message a pass handed to an account: it is resumed there). The accounts are read once
 * per team and channel per pass; the messages of the others keep the default hand-over.
 */
export async function routeThroughAccounts(deps: Deps, toSend: ToSend[], holders: AccountHolders): Promise<void> {
  // Sandbox messages always go to the outbox; so do live ones of a channel with no provider (held
  // ones, the others were recorded sent) whose team has no accounts for it.
  const live = toSend.filter((t) => !t.p.sandbox);
  if (live.length === 0) return;
  const keyOf = (t: ToSend) => `${t.p.team_id}\0${t.p.channel}`;
  const routes = new Map<string, Promise<Route>>();
  for (const t of live) {
    if (!holders.has(t.p.team_id, t.p.channel) && t.handedAccount === undefined) continue;
    const key = keyOf(t);
    let route = routes.get(key);
    if (!route) routes.set(key, route = failoverAccounts(deps, t.p.team_id, t.p.channel));
    t.handOver = async (context) => await handOverWithFailover(deps, t, await route, context);
  }
  // Read before the hand-overs begin, so that one that cannot be read fails the pass before any is sent.
  await Promise.all(routes.values());
}

/** Another pass claimed the message between two of this pass's hand-overs. */
class Taken extends Error {}

async function handOverWithFailover(deps: Deps, t: ToSend, route: Route, context: HandOverContext): Promise<Outcome> {
  if (t.handedAt !== undefined) return await resume(deps, t, t.handedAt, route, context);
  const id = t.message.id;
  // This pass's claim (handed_at) and the attempts already on the row.
  let stamp: Date | undefined;
  let written = 0;
  const beforeHandOver = async (account: FailoverAccount, attempts: readonly Attempt[]) => {
    const at = new Date(deps.now());
    const claimed = await deps.sql`
      update messages set handed_at = ${at}, handed_account = ${account.id},
        attempts = coalesce(attempts, '[]'::jsonb) || ${deps.sql.json(asJson(attempts.slice(written)))}
      where id = ${id} and status = 'pending' and handed_at is not distinct from ${stamp ?? null}::timestamptz
      returning 1`;
    if (claimed.length === 0) throw new Taken();
    stamp = at;
    written = attempts.length;
  };
  let result: FailoverResult;
  try {
    result = await sendWithFailover(t.message, route.accounts, {
      breakers,
      failoverOnTimeout: route.failoverOnTimeout,
      beforeHandOver,
      now: deps.now,
    });
  } catch (err) {
    if (err instanceof Taken) return heldElsewhere(t, HAND_OVER_WINDOW_MS);
    // The next hand-over could not be recorded, so it was not made; the earlier ones failed (certainly,
    // unless the team lets a timeout fail over and so accepts a possible duplicate).
    if (stamp) await release(deps, id, stamp);
    return failure(id, `Cannot record the hand-over: ${String(err)}`, true);
  }
  const fresh = result.attempts.slice(written);
  if (result.sent) {
    const sentWith = { attempts: fresh, provider: result.sent.provider };
    return await answered(t, { ok: true, id, providerMessageId: result.sent.providerMessageId, sentWith }, context);
  }
  const error = result.error!;
  // Certainly not taken by any account: the next try starts again from the first. Otherwise the row
  // keeps the account it was last handed to, and a later pass asks only that one.
  const certain = error.temporary && !error.maybeAccepted;
  await recordAttempts(deps, id, fresh, { release: certain });
  return failedWith(id, error, { pinned: !certain });
}

/**
 * The outcome of a message no account sent. `pinned`: it stays with the account it was last handed
 * to, so it is tried again only once that hand-over's window is over (see resume()).
 */
function failedWith(id: string, error: ProviderError, { pinned }: { pinned: boolean }): Outcome {
  return {
    ok: false,
    id,
    error: error.message,
    temporary: error.temporary,
    invalidToken: error.invalidToken,
    retryAfterMs: pinned ? Math.max(error.retryAfterMs ?? 0, HAND_OVER_WINDOW_MS) : error.retryAfterMs,
  };
}

/**
 * A message an earlier pass handed to an account and did not settle (it died, or the account's
 * answer left it unknown whether it took the message): settled through that account alone, once
 * its hand-over window is over. An idempotent account (Resend, FCM, APNs) is handed the same message
 * again; another (Twilio) is looked up in its log, as handoff.ts does for the default provider. An
 * account no longer among the team's fails the message as possibly sent.
 */
async function resume(
  deps: Deps,
  t: ToSend,
  handedAt: number,
  route: Route,
  context: HandOverContext,
): Promise<Outcome> {
  const id = t.message.id;
  const accountId = t.handedAccount ?? `default:${t.p.channel}`;
  const account = route.accounts.find((a) => a.id === accountId);
  const pinned: ToSend = { ...t, provider: account?.provider ?? t.provider };
  const left = handedAt + HAND_OVER_WINDOW_MS - context.handOverLog.now();
  if (left > 0) return heldElsewhere(pinned, left);
  if (!account) {
    return failure(id, `${mayHaveSentReason(pinned)}; its account is no longer among the team's accounts`, false);
  }
  if (!account.provider.resendable) {
    const outcome = await settleAbandoned(pinned, handedAt, context);
    const provider = account.provider.name;
    if (outcome.ok) {
      const attempt: Attempt = {
        account: account.id,
        provider,
        outcome: "sent",
        provider_message_id: outcome.providerMessageId,
      };
      return await answered(pinned, { ...outcome, sentWith: { attempts: [attempt], provider } }, context);
    }
    const attempt: Attempt = { account: account.id, provider, outcome: "unknown", error: outcome.error };
    await recordAttempts(deps, id, [attempt], {});
    return outcome;
  }
  const at = new Date(deps.now());
  const claimed = await deps.sql`
    update messages set handed_at = ${at}
    where id = ${id} and status = 'pending' and handed_at = ${new Date(handedAt)} returning 1`;
  if (claimed.length === 0) return heldElsewhere(pinned, HAND_OVER_WINDOW_MS);
  const result = await sendWithFailover(t.message, [account], { breakers, now: deps.now });
  if (result.sent) {
    const sentWith = { attempts: result.attempts, provider: result.sent.provider };
    return await answered(
      pinned,
      { ok: true, id, providerMessageId: result.sent.providerMessageId, sentWith },
      context,
    );
  }
  await recordAttempts(deps, id, result.attempts, {});
  // Still with this account: only it may have the message, so only it is asked again.
  return failedWith(id, result.error!, { pinned: true });
}

/** Records a sent message at once (with its webhook event), as the default hand-over does. */
async function answered(t: ToSend, outcome: Outcome & { ok: true }, context: HandOverContext): Promise<Outcome> {
  try {
    if (await context.handOverLog.answered(t, outcome)) return { ...outcome, recorded: true };
  } catch (err) {
    // The pass's own UPDATE still records it at its end; only a crash before then loses it.
    log("warn", "cannot record a provider's answer at once", { message_id: t.message.id, error: String(err) });
  }
  return outcome;
}

/**
 * Appends the attempts of a message no account sent to its record; with `release`, frees it for the
 * next try (no account may have it). Best effort: a sent message's attempts go with its sent status
 * instead (SentWith), and these only describe a message that is still to be settled.
 */
async function recordAttempts(
  deps: Deps,
  id: string,
  attempts: readonly Attempt[],
  options: { release?: boolean },
): Promise<void> {
  if (attempts.length === 0 && !options.release) return;
  const release = options.release ?? false;
  try {
    await deps.sql`
      update messages set attempts = coalesce(attempts, '[]'::jsonb) || ${deps.sql.json(asJson(attempts))},
        handed_at = case when ${release} then null else handed_at end,
        handed_account = case when ${release} then null else handed_account end
      where id = ${id} and status = 'pending'`;
  } catch (err) {
    log("warn", "cannot record a message's attempts", { message_id: id, error: String(err) });
  }
}

/** Frees a message this pass claimed and did not hand over (best effort: a later pass settles it otherwise). */
async function release(deps: Deps, id: string, stamp: Date): Promise<void> {
  try {
    await deps
      .sql`update messages set handed_at = null, handed_account = null where id = ${id} and handed_at = ${stamp}`;
  } catch (err) {
    log("warn", "cannot free a message's hand-over", { message_id: id, error: String(err) });
  }
}
