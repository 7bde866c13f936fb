import type { Db } from "../db.ts";
import { findIdentity, type Identity, isVerifiedSender } from "../identities.ts";
import type { Channel } from "../providers/types.ts";
import { findTemplate, type Template } from "../templates.ts";
import { recentBalance } from "../wallet.ts";
import { sendSetupChanges } from "../changes.ts";
import { TtlCache } from "../ttl_cache.ts";

/**
 * How long a look-up is reused: a few seconds, so that a change made by another process shows soon
 * (one made by this process empties the caches at once: see sendSetupChanges).
 */
const TTL_MS = 3_000;

/**
 * The look-ups a send needs (template, sender identity, verified domain, wallet balance), each
 * cached for a few seconds so that the accept path and the worker do not query per message.
 */
export class SendLookups {
  #db: Db;
  #now: () => number;
  #templates = new TtlCache<Template | undefined>(TTL_MS, { forgetOn: sendSetupChanges });
  #identities = new TtlCache<Identity | undefined>(TTL_MS, { forgetOn: sendSetupChanges });
  #domains = new TtlCache<boolean>(TTL_MS, { forgetOn: sendSetupChanges });

  constructor(db: Db, now: () => number) {
    this.#db = db;
    this.#now = now;
  }

  /** The team's template of `channel` by key (or id). */
  template(teamId: string, channel: Channel, keyOrId: string): Promise<Template | undefined> {
    return this.#templates.get(
      `${teamId}\0${channel}\0${keyOrId}`,
      this.#now(),
      () => findTemplate(this.#db, teamId, channel, keyOrId),
    );
  }

  /** The identity to send from: named by `id`, else serving `country`, else the default. */
  identity(teamId: string, channel: Channel, options: { id?: string; country?: string } = {}) {
    return this.#identities.get(
      `${teamId}\0${channel}\0${options.id ?? ""}\0${options.country ?? ""}`,
      this.#now(),
      () => findIdentity(this.#db, teamId, channel, options),
    );
  }

  /** True when the address is on a verified domain of the team. */
  verifiedSender(teamId: string, address: string): Promise<boolean> {
    const domain = address.split("@").pop()?.toLowerCase() ?? "";
    return this.#domains.get(`${teamId}\0${domain}`, this.#now(), () => isVerifiedSender(this.#db, teamId, address));
  }

  /** The team's wallet balance in micro-dollars (see recentBalance). */
  balance(teamId: string): Promise<number> {
    return recentBalance(this.#db, teamId, this.#now());
  }
}
