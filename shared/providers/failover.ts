/**
 * Sends one message through a team's channel accounts in priority order (the service's default
 * provider last), moving on only when it is certain the account did not take the message: a second
 * provider must never deliver what the first may have delivered.
 */
import { metrics } from "../metrics.ts";
import { CircuitBreakers } from "./circuit_breaker.ts";
import { failureOutcome, type OutboundMessage, type Provider, ProviderError, type SendOutcome } from "./types.ts";

/** One way out for the message: a team's account, or the service's default provider. */
export interface FailoverAccount {
  /** Names the account in attempts and keys its circuit breaker (a team account's id, or `default:<channel>`). */
  id: string;
  provider: Provider;
  /** False when this account cannot carry this message at all (an APNs account and an FCM token): passed over. */
  canSend?: (message: OutboundMessage) => boolean;
}

/** One hand-over (or skip) of the message, as the message's record lists it. */
export interface Attempt {
  account: string;
  provider: string;
  /** `skipped`: the account's circuit was open, the message was not handed to it. */
  outcome: SendOutcome | "skipped";
  provider_message_id?: string;
  error?: string;
}

/** What became of the message: every attempt, and the account that sent it or the error that ended it. */
export interface FailoverResult {
  attempts: Attempt[];
  sent?: { account: string; provider: string; providerMessageId: string };
  /** When no account sent it: the last failure (temporary when every circuit was open). */
  error?: ProviderError;
}

/** Options of {@linkcode sendWithFailover}. */
export interface FailoverOptions {
  /** The process's breakers (one CircuitBreakers shared by every send). */
  breakers: CircuitBreakers;
  /**
   * Go on to the next account after an `unknown` outcome (a timeout after the request left). Off by
   * default: the first account may have delivered the message, and the recipient would get it twice.
   */
  failoverOnTimeout?: boolean;
  /**
   * Called before each hand-over, so that the caller can record which account is being handed the
   * message: after a crash, that record says where it may have gone, and no other account is tried.
   * `attempts` are those made so far (recorded with it, so that a crash does not lose them). Throwing
   * stops the send before the hand-over (the error is thrown on).
   */
  beforeHandOver?: (account: FailoverAccount, attempts: readonly Attempt[]) => Promise<void>;
  now?: () => number;
}

/**
 * Sends `message` to the first account that takes it. A `temporary` failure (the account certainly
 * did not take it) moves on at once; a refusal stops (another provider would refuse it too, or it is
 * the message's fault); an `unknown` outcome stops unless `failoverOnTimeout`. An account whose
 * circuit is open is skipped.
 */
export async function sendWithFailover(
  message: OutboundMessage,
  accounts: readonly FailoverAccount[],
  options: FailoverOptions,
): Promise<FailoverResult> {
  const now = options.now ?? Date.now;
  const attempts: Attempt[] = [];
  let lastError: ProviderError | undefined;
  for (const account of accounts) {
    if (account.canSend && !account.canSend(message)) continue;
    const provider = account.provider.name;
    if (!options.breakers.tryAcquire(account.id, now())) {
      attempts.push({ account: account.id, provider, outcome: "skipped" });
      metrics.providerAttempts.inc({ provider, outcome: "skipped" });
      continue;
    }
    try {
      await options.beforeHandOver?.(account, attempts);
    } catch (error) {
      options.breakers.cancel(account.id);
      throw error;
    }
    try {
      const { providerMessageId } = await account.provider.send(message);
      options.breakers.record(account.id, "sent", now());
      attempts.push({ account: account.id, provider, outcome: "sent", provider_message_id: providerMessageId });
      metrics.providerAttempts.inc({ provider, outcome: "sent" });
      return { attempts, sent: { account: account.id, provider, providerMessageId } };
    } catch (error) {
      const outcome = failureOutcome(error);
      options.breakers.record(account.id, outcome, now());
      const text = error instanceof Error ? error.message : String(error);
      attempts.push({ account: account.id, provider, outcome, error: text });
      metrics.providerAttempts.inc({ provider, outcome });
      lastError = error instanceof ProviderError ? error : new ProviderError(text, { maybeAccepted: true });
      if (outcome === "temporary" || (outcome === "unknown" && options.failoverOnTimeout)) continue;
      return { attempts, error: lastError };
    }
  }
  if (!lastError && attempts.length === 0) {
    // No account can carry it (none left, or none of its push service), and no default provider
    // was given: trying again cannot help.
    return { attempts, error: new ProviderError(`Cannot send ${message.channel}: no account can carry this message`) };
  }
  if (!lastError) {
    const error = new ProviderError(`Cannot send ${message.channel}: every account's circuit is open`, {
      temporary: true,
    });
    return { attempts, error };
  }
  // An account passed over after a timeout may have taken the message: the whole is then uncertain.
  const uncertain = attempts.some((a) => a.outcome === "unknown") && !lastError.maybeAccepted;
  return { attempts, error: uncertain ? mayHaveBeenTaken(lastError) : lastError };
}

function mayHaveBeenTaken(error: ProviderError): ProviderError {
  return new ProviderError(`${error.message} (an earlier account timed out and may have taken it)`, {
    temporary: error.temporary,
    providerCode: error.providerCode,
    retryAfterMs: error.retryAfterMs,
    maybeAccepted: true,
  });
}
