import { monotonicFactory } from "ulid";

const pool = new Uint8Array(4_096);
let pooled = pool.length;

/**
 * The random source of the ulids: bytes of the system CSPRNG drawn 4 KiB at a time. The package's
 * own source calls `crypto.getRandomValues` once per character (16 per id: ~40 µs per new
 * millisecond, measured under load in `bench --profile`). A byte / 256 picks each of the 32
 * characters exactly equally often.
 */
function pooledRandom(): number {
  if (pooled === pool.length) {
    crypto.getRandomValues(pool);
    pooled = 0;
  }
  return pool[pooled++] / 256;
}

/**
 * A new ulid. One monotonic generator for the process: ids made in the same millisecond still sort
 * in order, and it is ~40× cheaper than `ulid()`, which sets up its random source on every call.
 */
export const newUlid: (now?: number) => string = monotonicFactory(pooledRandom);

/** The time part of the latest UUID v7 made: ids made in the same millisecond share it. */
const prefixed = { at: Number.NaN, prefix: "" };

/**
 * A UUID version 7 (RFC 9562): the first 48 bits are the creation time in ms, the rest random.
 * Trigger ids are v7 so that the time a pending trigger was accepted can be read back from its id
 * (see pendingSlot in keys.ts). Built from a random v4 UUID (its variant bits are v7's too).
 */
export function newUuidV7(now: number = Date.now()): string {
  if (now !== prefixed.at) {
    const time = now.toString(16).padStart(12, "0").slice(-12);
    prefixed.at = now;
    prefixed.prefix = `${time.slice(0, 8)}-${time.slice(8)}-7`;
  }
  return prefixed.prefix + crypto.randomUUID().slice(15);
}

/** The creation time (ms) of a UUID v7, or undefined for any other id. */
export function uuidV7Time(id: string): number | undefined {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id)) return undefined;
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}
