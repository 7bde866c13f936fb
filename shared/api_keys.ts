import type { Db } from "./db.ts";
import type { ApiKey, Team } from "./deps.ts";

/** The four kinds of API key. */
export type KeyKind = ApiKey["kind"];

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `length` base62 characters from the system CSPRNG (uniform: rejection sampling). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      // 248 = 4 * 62: bytes at or above it would bias the first characters.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** A new key: kind prefix plus 32 base62 characters (≈190 bits). */
export function generateKey(kind: KeyKind): string {
  return `${kind}_${randomBase62(32)}`;
}

/** Hex SHA-256 of a key: the only form in which keys are stored. */
export async function hashKey(key: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(key));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The visible part of a key kept to recognise it: its kind and first 6 random characters. */
export function keyPrefix(key: string): string {
  return key.slice(0, 14);
}

/** Stores a new key for the team and returns it (the only time it is seen in full). */
export async function createApiKey(db: Db, teamId: string, kind: KeyKind): Promise<string> {
  const key = generateKey(kind);
  await db`insert into api_keys ${db({ team_id: teamId, kind, key_hash: await hashKey(key), prefix: keyPrefix(key) })}`;
  return key;
}

/** A key's identity and team. */
export interface KeyRecord {
  apiKey: ApiKey;
  team: Team;
}

/**
 * Looks an unrevoked key up by its hash, noting when it was last used (the dashboard shows it). A
 * look-up happens only when the KeyCache misses, and the time is written at most once a minute, so
 * a burst of misses for one key writes once.
 */
export async function findKey(db: Db, key: string): Promise<KeyRecord | undefined> {
  const [row]: [{ id: string; prefix: string; kind: KeyKind; team_id: string; name: string; plan: Team["plan"] }?] =
    await db`
      with found as (
        select k.id, k.prefix, k.kind, t.id as team_id, t.name, t.plan
        from api_keys k join teams t on t.id = k.team_id
        where k.key_hash = ${await hashKey(key)} and k.revoked_at is null
      ), touched as (
        update api_keys set last_used_at = now()
        where id = (select id from found)
          and (last_used_at is null or last_used_at < now() - interval '1 minute')
      )
      select id, prefix, kind, team_id, name, plan from found`;
  if (!row) return undefined;
  return {
    apiKey: {
      id: row.id,
      prefix: row.prefix,
      kind: row.kind,
      secret: row.kind.startsWith("sk_"),
      test: row.kind.endsWith("_test"),
    },
    team: { id: row.team_id, name: row.name, plan: row.plan },
  };
}

/** Revokes a key by its prefix; returns whether one was revoked. */
export async function revokeKey(db: Db, prefix: string): Promise<boolean> {
  const rows =
    await db`update api_keys set revoked_at = now() where prefix = ${prefix} and revoked_at is null returning id`;
  return rows.length > 0;
}

interface CacheEntry {
  record: KeyRecord | undefined;
  expires: number;
}

/** Keeps key look-ups in memory briefly, so the hot path does not query per request. */
export class KeyCache {
  #entries = new Map<string, CacheEntry>();
  #ttlMs: number;
  #maxEntries: number;

  constructor(options: { ttlMs?: number; maxEntries?: number } = {}) {
    this.#ttlMs = options.ttlMs ?? 30_000;
    this.#maxEntries = options.maxEntries ?? 10_000;
  }

  /** The key's record, from the cache or the database (unknown keys are cached for a moment too). */
  async get(db: Db, key: string, now: number): Promise<KeyRecord | undefined> {
    const hit = this.#entries.get(key);
    if (hit && hit.expires > now) return hit.record;
    const record = await findKey(db, key);
    if (this.#entries.size >= this.#maxEntries) this.#entries.clear();
    this.#entries.set(key, { record, expires: now + (record ? this.#ttlMs : 2_000) });
    return record;
  }

  /** Forgets every cached key (after a revocation). */
  clear(): void {
    this.#entries.clear();
  }
}
