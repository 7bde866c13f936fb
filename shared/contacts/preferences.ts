import type { Db } from "../db.ts";
import type { Channel } from "../providers/types.ts";
import { contactMatch, type ContactRef, type ContactRow, type Preferences } from "./queries.ts";

/** The channels a preference exists for. */
export const CHANNELS: readonly Channel[] = ["email", "sms", "whatsapp", "push"];
/** The categories a preference exists for. */
export const CATEGORIES = ["transactional", "promotional"] as const;
/** A preference category. */
export type Category = typeof CATEGORIES[number];

/** One preference change: subscribe or unsubscribe (channel, category). */
export interface PreferenceChange {
  channel: Channel;
  category: Category;
  subscribed: boolean;
}

/** Counts over a contact's eight preferences; `subscriptionRate` is the subscribed share in percent. */
export interface PreferenceSummary {
  totalPreferences: number;
  subscribedCount: number;
  unsubscribedCount: number;
  subscriptionRate: number;
}

/** Summarises a preferences object (every channel and category counted once). */
export function summarisePreferences(preferences: Preferences): PreferenceSummary {
  let subscribed = 0;
  for (const channel of CHANNELS) {
    for (const category of CATEGORIES) if (preferences[channel]?.[category]) subscribed++;
  }
  const total = CHANNELS.length * CATEGORIES.length;
  return {
    totalPreferences: total,
    subscribedCount: subscribed,
    unsubscribedCount: total - subscribed,
    subscriptionRate: Math.round((subscribed / total) * 10_000) / 100,
  };
}

/** Changes that set every category of the given channels (all channels by default) to `subscribed`. */
export function setAll(subscribed: boolean, channels: readonly Channel[] = CHANNELS): PreferenceChange[] {
  return channels.flatMap((channel) => CATEGORIES.map((category) => ({ channel, category, subscribed })));
}

/** The team's contact's preferences, or undefined when there is no such contact. */
export async function findPreferences(db: Db, teamId: string, ref: ContactRef): Promise<Preferences | undefined> {
  const [row]: [{ preferences: Preferences }?] = await db`
    select preferences from contacts where ${contactMatch(db, teamId, ref)}`;
  return row?.preferences;
}

/** Applies preference changes (later ones win) in one statement; the updated contact, or undefined. */
export async function updatePreferences(
  db: Db,
  teamId: string,
  ref: ContactRef,
  changes: PreferenceChange[],
): Promise<ContactRow | undefined> {
  const patch: Record<string, Record<string, boolean>> = { email: {}, sms: {}, whatsapp: {}, push: {} };
  for (const change of changes) patch[change.channel][change.category] = change.subscribed;
  const [row]: [ContactRow?] = await db`
    update contacts
    set preferences = jsonb_build_object(
      'email', coalesce(preferences -> 'email', '{}') || ${db.json(patch.email)},
      'sms', coalesce(preferences -> 'sms', '{}') || ${db.json(patch.sms)},
      'whatsapp', coalesce(preferences -> 'whatsapp', '{}') || ${db.json(patch.whatsapp)},
      'push', coalesce(preferences -> 'push', '{}') || ${db.json(patch.push)}
    ), updated_at = now()
    where ${contactMatch(db, teamId, ref)}
    returning *`;
  return row;
}
