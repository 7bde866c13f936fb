/**
 * A circuit breaker per channel account, in this process: after BREAKER_THRESHOLD failures in a row
 * (temporary or unknown: the provider is in trouble, not the message) an account is skipped for
 * BREAKER_COOLDOWN_MS, then one message probes it (half-open): sent or refused closes it again, a
 * failure opens it for another cool-down. Each process keeps its own: a replica learns an account is
 * down from its own failures, which costs at most BREAKER_THRESHOLD hand-overs per replica.
 */
import type { SendOutcome } from "./types.ts";

/** Failures in a row that open an account's circuit: few enough to stop paying a dead provider's timeouts. */
export const BREAKER_THRESHOLD = 5;
/** How long an open circuit skips its account before one message probes it. */
export const BREAKER_COOLDOWN_MS = 30_000;

/** Where an account's circuit stands. */
export type BreakerState = "closed" | "open" | "half-open";

interface Circuit {
  failures: number;
  /** Set while open (and half-open): when it last opened. */
  openedAt?: number;
  /** A probe is out: other messages still skip the account until it ends. */
  probing: boolean;
}

/** The circuits of every account a process sends through, by account id. */
export class CircuitBreakers {
  readonly #circuits = new Map<string, Circuit>();
  readonly #threshold: number;
  readonly #cooldownMs: number;

  constructor(options: { threshold?: number; cooldownMs?: number } = {}) {
    this.#threshold = options.threshold ?? BREAKER_THRESHOLD;
    this.#cooldownMs = options.cooldownMs ?? BREAKER_COOLDOWN_MS;
  }

  /** The state of `account`'s circuit at `now`. */
  state(account: string, now: number): BreakerState {
    const circuit = this.#circuits.get(account);
    if (circuit?.openedAt === undefined) return "closed";
    return now < circuit.openedAt + this.#cooldownMs ? "open" : "half-open";
  }

  /**
   * True when a message may go to `account` now: always while closed, never while open, and once per
   * cool-down while half-open (that message is the probe; the caller must record its outcome).
   */
  tryAcquire(account: string, now: number): boolean {
    const state = this.state(account, now);
    if (state === "closed") return true;
    const circuit = this.#circuits.get(account)!;
    if (state === "open" || circuit.probing) return false;
    circuit.probing = true;
    return true;
  }

  /**
   * Gives back a tryAcquire whose hand-over was not made (it could not be recorded first): a probe
   * left out would keep a half-open account skipped for good.
   */
  cancel(account: string): void {
    const circuit = this.#circuits.get(account);
    if (circuit) circuit.probing = false;
  }

  /** Records the outcome of a hand-over to `account` that tryAcquire allowed. */
  record(account: string, outcome: SendOutcome, now: number): void {
    if (outcome === "sent" || outcome === "refused") {
      // The provider answered: it is up, whatever it thought of the message.
      this.#circuits.delete(account);
      return;
    }
    const circuit = this.#circuits.get(account) ?? { failures: 0, probing: false };
    circuit.failures++;
    if (circuit.openedAt !== undefined || circuit.failures >= this.#threshold) {
      circuit.openedAt = now;
      circuit.probing = false;
    }
    this.#circuits.set(account, circuit);
  }
}
