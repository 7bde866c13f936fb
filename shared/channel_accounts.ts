/**
 * A team's own provider accounts per channel, in priority order (table team_channel_accounts): set by
 * the admin API, read by the delivery path to send through them before the service's default
 * provider (shared/providers/failover.ts). Credentials are kept only sealed (shared/secret_box.ts).
 */
import type { Db, Sql } from "./db.ts";
import type { Deps } from "./deps.ts";
import { asJson } from "./db.ts";
import { AppError } from "./errors.ts";
import { type AccountProviderName, maskCredentials } from "./providers/credentials.ts";
import type { Channel } from "./providers/types.ts";
import { importSecretKey, seal, unseal } from "./secret_box.ts";

/** One account as a PUT names it (credentials already validated against its provider's schema). */
export interface ChannelAccountInput {
  provider: AccountProviderName;
  credentials: Record<string, unknown>;
  base_url?: string;
}

/** The accounts of one channel of a team, as the admin API shows them (secrets masked). */
export interface ChannelAccountList {
  channel: Channel;
  failover_on_timeout: boolean;
  accounts: {
    id: string;
    priority: number;
    provider: AccountProviderName;
    base_url: string | null;
    credentials: Record<string, unknown>;
    updated_at: string;
  }[];
}

/** One account with its credentials in the clear: only ever in memory, on the way to a provider. */
export interface ChannelAccount {
  id: string;
  provider: AccountProviderName;
  baseUrl?: string;
  credentials: Record<string, unknown>;
  /** Changes with every PUT, so that a cached provider client is rebuilt. */
  updatedAt: number;
}

/** 503 when CHANNEL_ACCOUNTS_KEY is unset: the operator, not the caller, has something to do. */
export class MissingKeyError extends AppError {
  constructor() {
    super(
      503,
      "channel_accounts_key_missing",
      "Cannot store channel accounts: the operator must set CHANNEL_ACCOUNTS_KEY (base64 of 32 random bytes, " +
        "e.g. openssl rand -base64 32) to encrypt their credentials",
    );
  }
}

const keys = new Map<string, Promise<CryptoKey>>();

/** The key of CHANNEL_ACCOUNTS_KEY, imported once per process; MissingKeyError without one. */
export function channelAccountsKey(base64: string | undefined): Promise<CryptoKey> {
  if (!base64) return Promise.reject(new MissingKeyError());
  let key = keys.get(base64);
  if (!key) keys.set(base64, key = importSecretKey(base64));
  return key;
}

/** What a sealed credential is bound to: copied into another team's or channel's row, it does not open. */
function sealContext(teamId: string, channel: Channel, provider: string): string {
  return `team_channel_accounts/${teamId}/${channel}/${provider}`;
}

/** Replaces a team's accounts of `channel` with `accounts` (first is tried first); answers them masked. */
export async function putChannelAccounts(
  sql: Sql,
  key: CryptoKey,
  target: { teamId: string; channel: Channel; failoverOnTimeout: boolean },
  accounts: ChannelAccountInput[],
): Promise<ChannelAccountList> {
  const { teamId, channel } = target;
  const rows = await Promise.all(accounts.map(async (a, priority) => {
    const sealed = await seal(key, a.credentials, sealContext(teamId, channel, a.provider));
    return {
      team_id: teamId,
      channel,
      priority,
      provider: a.provider,
      base_url: a.base_url ?? null,
      failover_on_timeout: target.failoverOnTimeout,
      masked: asJson(maskCredentials(a.provider, a.credentials)),
      credentials_ciphertext: sealed.ciphertext,
      credentials_iv: sealed.iv,
    };
  }));
  await sql.begin(async (tx) => {
    await tx`delete from team_channel_accounts where team_id = ${teamId} and channel = ${channel}`;
    if (rows.length > 0) await tx`insert into team_channel_accounts ${tx(rows)}`;
  });
  return await listChannelAccounts(sql, teamId, channel);
}

/** Which teams hold channel accounts for which channels. */
export interface AccountHolders {
  has(teamId: string, channel: Channel): boolean;
}

/** No team holds any account (a pass or request that sends nothing live). */
export const NO_HOLDERS: AccountHolders = { has: () => false };

/**
 * Which of `teamIds` hold channel accounts for which channels, as the delivery path uses them: one
 * indexed query, or none without teams or without CHANNEL_ACCOUNTS_KEY (then no account can be opened,
 * so none carries a message).
 */
export async function holdersAmong(
  deps: Pick<Deps, "sql" | "config">,
  teamIds: readonly string[],
): Promise<AccountHolders> {
  if (!deps.config.CHANNEL_ACCOUNTS_KEY || teamIds.length === 0) return NO_HOLDERS;
  const rows = await deps.sql<{ team_id: string; channel: Channel }[]>`
    select distinct team_id::text, channel from team_channel_accounts where team_id = any(${teamIds}::uuid[])`;
  const pairs = new Set(rows.map((r) => `${r.team_id}\0${r.channel}`));
  return { has: (teamId, channel) => pairs.has(`${teamId}\0${channel}`) };
}

/** A team's accounts of `channel`, in priority order, credentials masked (needs no key). */
export async function listChannelAccounts(db: Db, teamId: string, channel: Channel): Promise<ChannelAccountList> {
  const rows: {
    id: string;
    priority: number;
    provider: AccountProviderName;
    base_url: string | null;
    masked: Record<string, unknown>;
    failover_on_timeout: boolean;
    updated_at: Date;
  }[] = await db`
    select id, priority, provider, base_url, masked, failover_on_timeout, updated_at
    from team_channel_accounts where team_id = ${teamId} and channel = ${channel}
    order by priority`;
  return {
    channel,
    failover_on_timeout: rows[0]?.failover_on_timeout ?? false,
    accounts: rows.map((r) => ({
      id: r.id,
      priority: r.priority,
      provider: r.provider,
      base_url: r.base_url,
      credentials: r.masked,
      updated_at: r.updated_at.toISOString(),
    })),
  };
}

/**
 * A stored account cannot be opened with this CHANNEL_ACCOUNTS_KEY (it was sealed under another, or
 * altered): only the operator putting the accounts again mends it. Any other failure to load them
 * (the database away) is passing, and is thrown as it is.
 */
export class SealedElsewhere extends Error {}

/**
 * A team's accounts of `channel` with their credentials opened, in priority order, and whether the
 * team lets a message whose first hand-over timed out go to the next account.
 */
export async function loadChannelAccounts(
  db: Db,
  key: CryptoKey,
  teamId: string,
  channel: Channel,
): Promise<{ accounts: ChannelAccount[]; failoverOnTimeout: boolean }> {
  const rows: {
    id: string;
    provider: AccountProviderName;
    base_url: string | null;
    failover_on_timeout: boolean;
    credentials_ciphertext: Uint8Array;
    credentials_iv: Uint8Array;
    updated_at: Date;
  }[] = await db`
    select id, provider, base_url, failover_on_timeout, credentials_ciphertext, credentials_iv, updated_at
    from team_channel_accounts where team_id = ${teamId} and channel = ${channel}
    order by priority`;
  const accounts = await Promise.all(rows.map(async (r) => ({
    id: r.id,
    provider: r.provider,
    baseUrl: r.base_url ?? undefined,
    credentials: await unseal<Record<string, unknown>>(key, {
      ciphertext: new Uint8Array(r.credentials_ciphertext),
      iv: new Uint8Array(r.credentials_iv),
    }, sealContext(teamId, channel, r.provider)).catch((error) => {
      throw new SealedElsewhere(`Cannot open the ${channel} account ${r.id}: ${String(error)}`);
    }),
    updatedAt: r.updated_at.getTime(),
  })));
  return { accounts, failoverOnTimeout: rows[0]?.failover_on_timeout ?? false };
}
