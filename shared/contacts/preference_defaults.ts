import type { Channel } from "../providers/types.ts";
import type { Preferences } from "./queries.ts";

/**
 * A contact's preferences on creation, those of the specification: every one true except the
 * promotional ones of email, WhatsApp and push. The column default of migration 001 holds the same.
 */
export const DEFAULT_PREFERENCES: Readonly<Preferences> = Object.freeze({
  email: { transactional: true, promotional: false },
  sms: { transactional: true, promotional: true },
  whatsapp: { transactional: true, promotional: false },
  push: { transactional: true, promotional: false },
});

/** Preferences in the read shape, any channel or category left out. */
export type PreferencesInput = Partial<Record<Channel, Partial<Preferences[Channel]>>>;

/** The defaults with the given preferences applied over them. */
export function overDefaults(given: PreferencesInput = {}): Preferences {
  const out = {} as Preferences;
  for (const channel of Object.keys(DEFAULT_PREFERENCES) as Channel[]) {
    out[channel] = { ...DEFAULT_PREFERENCES[channel], ...given[channel] };
  }
  return out;
}
