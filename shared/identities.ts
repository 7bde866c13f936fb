import type { Db, Sql } from "./db.ts";
import { sendSetupChanges } from "./changes.ts";
import type { Channel } from "./providers/types.ts";

/** A sender identity: email address and name, SMS sender id or number, WhatsApp number, push app. */
export interface Identity {
  team_id: string;
  channel: Channel;
  id: string;
  from_address: string;
  name: string | null;
  /** ISO country codes served (SMS); null serves every country. */
  countries: string[] | null;
  is_default: boolean;
}

/** The fields an identity upsert may set. */
export interface IdentityInput {
  from: string;
  name?: string | null;
  countries?: string[] | null;
  is_default?: boolean;
}

/**
 * Creates or replaces an identity; making it the default clears the channel's other default. One
 * transaction, holding a lock on the team's channel: two concurrent upserts that each make another
 * identity the default would otherwise both find no other default to clear, and the second insert
 * would break the one-default index.
 */
export async function upsertIdentity(
  sql: Sql,
  teamId: string,
  channel: Channel,
  id: string,
  input: IdentityInput,
): Promise<Identity> {
  const identity = await sql.begin(async (tx) => {
    await tx`select pg_advisory_xact_lock(hashtext(${`sender_identities:${teamId}:${channel}`}))`;
    if (input.is_default) {
      await tx`update sender_identities set is_default = false
        where team_id = ${teamId} and channel = ${channel} and id <> ${id} and is_default`;
    }
    return await writeIdentity(tx, teamId, channel, id, input);
  });
  sendSetupChanges.note();
  return identity;
}

async function writeIdentity(
  db: Db,
  teamId: string,
  channel: Channel,
  id: string,
  input: IdentityInput,
): Promise<Identity> {
  const row = {
    team_id: teamId,
    channel,
    id,
    from_address: input.from,
    name: input.name ?? null,
    countries: input.countries ?? null,
    is_default: input.is_default ?? false,
  };
  const [identity]: [Identity] = await db`
    insert into sender_identities ${db(row)}
    on conflict (team_id, channel, id) do update set
      ${db(row, "from_address", "name", "countries", "is_default")}, updated_at = now()
    returning team_id, channel, id, from_address, name, countries, is_default`;
  return identity;
}

/**
 * The identity to send from: the one named by `id`, else the channel's identity serving
 * `country` (when given), else the channel's default.
 */
export async function findIdentity(
  db: Db,
  teamId: string,
  channel: Channel,
  options: { id?: string; country?: string } = {},
): Promise<Identity | undefined> {
  if (options.id) {
    const [named]: [Identity?] = await db`
      select team_id, channel, id, from_address, name, countries, is_default from sender_identities
      where team_id = ${teamId} and channel = ${channel} and id = ${options.id}`;
    return named;
  }
  const [found]: [Identity?] = await db`
    select team_id, channel, id, from_address, name, countries, is_default from sender_identities
    where team_id = ${teamId} and channel = ${channel}
      and (${options.country ?? null}::text is null or countries is null or ${options.country ?? ""} = any(countries))
    order by (countries is not null and ${options.country ?? ""} = any(countries)) desc, is_default desc, created_at
    limit 1`;
  return found;
}

/** The team's sender identities, by channel, the default first, then by id. */
export async function listIdentities(db: Db, teamId: string): Promise<Identity[]> {
  return await db<Identity[]>`
    select team_id, channel, id, from_address, name, countries, is_default from sender_identities
    where team_id = ${teamId} order by channel, is_default desc, id`;
}

/** Deletes an identity of the team; whether there was one. Sends naming it fail from then on. */
export async function deleteIdentity(db: Db, teamId: string, channel: Channel, id: string): Promise<boolean> {
  const rows = await db`
    delete from sender_identities where team_id = ${teamId} and channel = ${channel} and id = ${id} returning id`;
  sendSetupChanges.note();
  return rows.length > 0;
}

/** Marks an email domain of the team verified (or not). */
export async function setDomainVerified(db: Db, teamId: string, domain: string, verified: boolean): Promise<void> {
  await db`
    insert into email_domains ${db({ team_id: teamId, domain: domain.toLowerCase(), verified })}
    on conflict (team_id, domain) do update set verified = excluded.verified, updated_at = now()`;
  sendSetupChanges.note();
}

/** True when the address's domain is a verified domain of the team. */
export async function isVerifiedSender(db: Db, teamId: string, address: string): Promise<boolean> {
  const domain = address.split("@").pop()?.toLowerCase() ?? "";
  const [row] = await db`select 1 from email_domains where team_id = ${teamId} and domain = ${domain} and verified`;
  return row !== undefined;
}
