import type postgres from "postgres";
import type { Db, Sql } from "../db.ts";
import { type ContactRow, createContact, type NewContact } from "./queries.ts";

/** A push platform. */
export type Platform = "android" | "ios" | "web";

/** The service that delivers a push token. */
export type PushService = "fcm" | "apns";

/** The platform of a token given without one: FCM's tokens serve Android (and the web). */
export const DEFAULT_PLATFORM: Platform = "android";

/** The most actions a notification shows on each platform (the specification's push send). */
export const PUSH_ACTION_LIMITS: Record<Platform, number> = { android: 3, ios: 4, web: 2 };

/** A device registered for push. */
export interface DeviceTokenRow {
  id: string;
  token: string;
  platform: Platform;
  /** Derived from the token's form (migration 013): see pushServiceOf. */
  provider: PushService;
  os_version: string | null;
  app_version: string | null;
  device_model: string | null;
  created_at: Date;
  updated_at: Date;
}

/** A device to register for a contact. */
export interface DeviceTokenInput {
  token: string;
  platform: Platform;
  os_version?: string | null;
  app_version?: string | null;
  device_model?: string | null;
}

/**
 * DESIGN.md's bound. Real tokens are far shorter (FCM about 160 characters, APNs 64). A btree row
 * stops at 2,704 bytes, so Postgres indexes a token by its md5 (migration 008), and a message keys a
 * long one by its digest (worker/prepare.ts, `recipientKey`).
 */
export const MAX_TOKEN_LENGTH = 4_096;
const TOKEN = new RegExp(`^[A-Za-z0-9_:.-]{32,${MAX_TOKEN_LENGTH}}$`);
const APNS_TOKEN = /^[0-9A-Fa-f]{64}$/;

/**
 * `token` is one of these, as a condition the md5 indexes of device_tokens serve (migration 008):
 * the md5 finds the rows, the text decides.
 */
export function tokenIn(db: Db, tokens: string[]): postgres.Fragment {
  return db`md5(token) = any(array(select md5(t) from unnest(${tokens}::text[]) t)) and token = any(${tokens}::text[])`;
}

/**
 * True for a well-formed push token on any platform: 32–4,096 of `[A-Za-z0-9_:.-]`. An iOS device
 * holds an APNs token (64 hex characters, which this includes) or, in an app that uses Firebase, an
 * FCM registration token.
 */
export function isValidDeviceToken(token: string): boolean {
  return TOKEN.test(token);
}

/** True for an APNs device token: 64 hex characters. */
export function isApnsToken(token: string): boolean {
  return APNS_TOKEN.test(token);
}

/**
 * The service a token goes through: an APNs token of an iOS device goes to APNs, every other token
 * (an iOS app's FCM registration token included) to FCM. Migration 013 derives device_tokens.provider
 * by the same rule.
 */
export function pushServiceOf(token: string, platform: Platform | undefined): PushService {
  return platform === "ios" && isApnsToken(token) ? "apns" : "fcm";
}

/**
 * Registers devices for the team's contact with this external id (see attachDevices). Answers the
 * contact and all its devices, or undefined when there is no such contact.
 */
export async function registerDeviceTokens(
  sql: Sql,
  teamId: string,
  externalId: string,
  devices: DeviceTokenInput[],
): Promise<{ contact: ContactRow; devices: DeviceTokenRow[] } | undefined> {
  return await sql.begin(async (tx) => {
    const [contact]: [ContactRow?] = await tx`
      update contacts set updated_at = now()
      where team_id = ${teamId} and external_id = ${externalId}
      returning *`;
    if (!contact) return undefined;
    await attachDevices(tx, teamId, contact.id, devices);
    return { contact, devices: await listDeviceTokens(tx, teamId, contact.id) };
  });
}

/**
 * Upserts devices of the contact on (contact, token); a token registered to another contact of the
 * team moves to this one, since a device has one user. Run inside the caller's transaction.
 */
export async function attachDevices(
  tx: Db,
  teamId: string,
  contactId: string,
  devices: DeviceTokenInput[],
): Promise<void> {
  if (devices.length === 0) return;
  const tokens = devices.map((d) => d.token);
  await tx`
    delete from device_tokens
    where team_id = ${teamId} and ${tokenIn(tx, tokens)} and contact_id <> ${contactId}`;
  const rows = devices.map((d) => ({
    team_id: teamId,
    contact_id: contactId,
    token: d.token,
    platform: d.platform,
    os_version: d.os_version ?? null,
    app_version: d.app_version ?? null,
    device_model: d.device_model ?? null,
  }));
  await tx`
    insert into device_tokens ${tx(rows)}
    on conflict (contact_id, md5(token)) do update set
      platform = excluded.platform,
      os_version = coalesce(excluded.os_version, device_tokens.os_version),
      app_version = coalesce(excluded.app_version, device_tokens.app_version),
      device_model = coalesce(excluded.device_model, device_tokens.device_model),
      updated_at = now()`;
}

/** The devices of a contact, oldest first. */
export async function listDeviceTokens(db: Db, teamId: string, contactId: string): Promise<DeviceTokenRow[]> {
  return await db<DeviceTokenRow[]>`
    select id, token, platform, provider, os_version, app_version, device_model, created_at, updated_at
    from device_tokens
    where team_id = ${teamId} and contact_id = ${contactId}
    order by created_at, id`;
}

/**
 * Creates a contact and registers its devices in one transaction (a create that names device
 * tokens); see createContact and attachDevices.
 */
export async function createContactWithDevices(
  sql: Sql,
  teamId: string,
  input: NewContact,
  devices: DeviceTokenInput[],
): Promise<ContactRow> {
  if (devices.length === 0) return await createContact(sql, teamId, input);
  return await sql.begin(async (tx) => {
    const contact = await createContact(tx, teamId, input);
    await attachDevices(tx, teamId, contact.id, devices);
    return contact;
  });
}
