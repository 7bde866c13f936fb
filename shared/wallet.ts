import type { Db } from "./db.ts";
import { toUsd } from "./money.ts";
import { TtlCache } from "./ttl_cache.ts";

/** One row of a team's wallet ledger. */
export interface LedgerEntry {
  id: number;
  kind: "topup" | "charge" | "refund";
  amount: number;
  balance_after: number;
  reference: string | null;
  description: string | null;
  created_at: Date;
}

/** How long a balance read for a send's pre-check is reused, when this process has not changed it since. */
const RECENT_BALANCE_MS = 3_000;
/** Balances by team id (ids are unique across databases, so one cache serves the process). */
const recentBalances = new TtlCache<number>(RECENT_BALANCE_MS);

/**
 * The team's balance for a pre-check on a hot path (a send's 'Insufficient wallet balance'): read at
 * most a few seconds ago, and read again after any change this process made (see balancesChanged).
 * Only a change made by another process can go unseen, for at most RECENT_BALANCE_MS.
 */
export function recentBalance(db: Db, teamId: string, now: number): Promise<number> {
  return recentBalances.get(teamId, now, () => balanceMicros(db, teamId));
}

/**
 * Forgets the recent balances of `teamIds`. topUp, charge and refund call it; a caller that runs
 * them in a transaction calls it again once the transaction has committed (a pre-check in between
 * may have read the balance from before it).
 */
export function balancesChanged(teamIds: Iterable<string>): void {
  for (const teamId of teamIds) recentBalances.delete(teamId);
}

/** The team's balance in micro-dollars. */
export async function balanceMicros(db: Db, teamId: string): Promise<number> {
  const [row]: [{ balance_micros: number }?] = await db`select balance_micros from wallets where team_id = ${teamId}`;
  return row?.balance_micros ?? 0;
}

/** Adds money to the wallet and records it; returns the new balance in micro-dollars. */
export async function topUp(db: Db, teamId: string, micros: number, description = "Top-up"): Promise<number> {
  const [row]: [{ balance_after_micros: number }] = await db`
    with w as (
      insert into wallets (team_id, balance_micros) values (${teamId}, ${micros})
      on conflict (team_id) do update set balance_micros = wallets.balance_micros + excluded.balance_micros,
        updated_at = now()
      returning team_id, balance_micros
    )
    insert into wallet_ledger (team_id, kind, amount_micros, balance_after_micros, description)
    select team_id, 'topup', ${micros}, balance_micros, ${description} from w
    returning balance_after_micros`;
  balancesChanged([teamId]);
  return row.balance_after_micros;
}

/**
 * Takes `micros` from the wallet if the balance covers it, in one statement (no read-then-write),
 * and records the charge. Returns the new balance, or undefined when the balance was too low.
 */
export async function charge(
  db: Db,
  teamId: string,
  micros: number,
  reference: string,
  description: string,
): Promise<number | undefined> {
  if (micros === 0) return await balanceMicros(db, teamId);
  const [row]: [{ balance_after_micros: number }?] = await db`
    with w as (
      update wallets set balance_micros = balance_micros - ${micros}, updated_at = now()
      where team_id = ${teamId} and balance_micros >= ${micros}
      returning team_id, balance_micros
    )
    insert into wallet_ledger (team_id, kind, amount_micros, balance_after_micros, reference, description)
    select team_id, 'charge', ${-micros}, balance_micros, ${reference}, ${description} from w
    returning balance_after_micros`;
  if (row) balancesChanged([teamId]);
  return row?.balance_after_micros;
}

/** One entry of a charge made of several (see chargeEach). */
export interface ChargeEntry {
  micros: number;
  reference: string;
  description: string;
}

/**
 * Takes the sum of `entries` from the wallet if the balance covers it, recording each entry on its
 * own ledger row, in one statement whatever their number (the conversations a WhatsApp fan-out opens
 * are charged one by one). All or nothing: undefined when the balance was too low.
 */
export async function chargeEach(db: Db, teamId: string, entries: ChargeEntry[]): Promise<number | undefined> {
  if (entries.length === 1) {
    return await charge(db, teamId, entries[0].micros, entries[0].reference, entries[0].description);
  }
  const total = entries.reduce((sum, e) => sum + e.micros, 0);
  if (total === 0) return await balanceMicros(db, teamId);
  const rows: { balance_after_micros: number }[] = await db`
    with w as (
      update wallets set balance_micros = balance_micros - ${total}, updated_at = now()
      where team_id = ${teamId} and balance_micros >= ${total}
      returning team_id, balance_micros
    )
    insert into wallet_ledger (team_id, kind, amount_micros, balance_after_micros, reference, description)
    select w.team_id, 'charge', -e.micros, w.balance_micros + ${total} - sum(e.micros) over (order by e.ord),
      e.reference, e.description
    from w cross join unnest(${entries.map((e) => e.micros)}::bigint[], ${entries.map((e) => e.reference)}::text[],
      ${entries.map((e) => e.description)}::text[]) with ordinality as e(micros, reference, description, ord)
    order by e.ord
    returning balance_after_micros`;
  if (rows.length === 0) return undefined;
  balancesChanged([teamId]);
  return rows.reduce((least, r) => Math.min(least, r.balance_after_micros), Infinity);
}

/** Gives back a charge that was not used (a send that failed before the provider). */
export async function refund(
  db: Db,
  teamId: string,
  micros: number,
  reference: string,
  description: string,
): Promise<number> {
  const [row]: [{ balance_after_micros: number }] = await db`
    with w as (
      update wallets set balance_micros = balance_micros + ${micros}, updated_at = now()
      where team_id = ${teamId}
      returning team_id, balance_micros
    )
    insert into wallet_ledger (team_id, kind, amount_micros, balance_after_micros, reference, description)
    select team_id, 'refund', ${micros}, balance_micros, ${reference}, ${description} from w
    returning balance_after_micros`;
  balancesChanged([teamId]);
  return row.balance_after_micros;
}

/**
 * The latest ledger entries, newest first, amounts in USD; with `beforeId`, those older than that
 * entry (a keyset page: as fast on the millionth entry as on the first).
 */
export async function ledger(db: Db, teamId: string, limit = 50, beforeId?: number): Promise<LedgerEntry[]> {
  const rows = await db<
    {
      id: number;
      kind: LedgerEntry["kind"];
      amount_micros: number;
      balance_after_micros: number;
      reference: string | null;
      description: string | null;
      created_at: Date;
    }[]
  >`
    select id, kind, amount_micros, balance_after_micros, reference, description, created_at
    from wallet_ledger where team_id = ${teamId} ${beforeId === undefined ? db`` : db`and id < ${beforeId}`}
    order by id desc limit ${limit}`;
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    amount: toUsd(r.amount_micros),
    balance_after: toUsd(r.balance_after_micros),
    reference: r.reference,
    description: r.description,
    created_at: r.created_at,
  }));
}
