import type { Db } from "../db.ts";
import { findIdentity, type Identity, isVerifiedSender } from "../identities.ts";
import type { Channel } from "../providers/types.ts";
import { findTemplate, type Template } from "../templates.ts";
import { recentBalance } from "../wallet.ts";
import { sendSetupChanges } from "../setup_changes.ts";
import { TtlCache } from "../ttl_cache.ts";

/**
 * How long a look-up is reused: a few seconds, so that a change made by another process shows soon
 * (one made by this process empties the caches at once: see sendSetupChanged).
 */
const TTL_MS = 3_000;

/**
 * The look-ups a send needs (template, sender identity, verified domain, wallet balance), each
 * cached for a few seconds so that the accept path and the worker do not query per message.
 */
export class SendLookups {
  #db: Db;
  #now: () => number;
  #templates = new TtlCache<Template | undefined>(TTL_MS);
  #identities = new TtlCache<Identity | undefined>(TTL_MS);
  #domains = new TtlCache<boolean>(TTL_MS);
  /** sendSetupChanges() when the caches were made: a change since empties them. */
  #changes = sendSetupChanges();

  constructor(db: Db, now: () => number) {
    this.#db = db;
    this.#now = now;
  }

  /** The team's template of `channel` by key (or id). */
  template(teamId: string, channel: Channel, keyOrId: string): Promise<Template | undefined> {
    this.#forgetChanged();
    return this.#templates.get(
      `${teamId}\0${channel}\0${keyOrId}`,
      this.#now(),
      () => findTemplate(this.#db, teamId, channel, keyOrId),
    );
  }

  /** The identity to send from: named by `id`, else serving `country`, else the default. */
  identity(teamId: string, channel: Channel, options: { id?: string; country?: string } = {}) {
    this.#forgetChanged();
    return this.#identities.get(
      `${teamId}\0${channel}\0${options.id ?? ""}\0${options.country ?? ""}`,
      this.#now(),
      () => findIdentity(this.#db, teamId, channel, options),
    );
  }

  /** True when the address is on a verified domain of the team. */
  verifiedSender(teamId: string, address: string): Promise<boolean> {
    const domain = address.split("@").pop()?.toLowerCase() ?? "";
    this.#forgetChanged();
    return this.#domains.get(`${teamId}\0${domain}`, this.#now(), () => isVerifiedSender(this.#db, teamId, address));
  }

  /** Empties the caches when this process changed a team's send set-up since they were made. */
  #forgetChanged(): void {
    if (this.#changes === sendSetupChanges()) return;
    this.#changes = sendSetupChanges();
    this.#templates.clear();
    this.#identities.clear();
    this.#domains.clear();
  }

  /** The team's wallet balance in micro-dollars (see recentBalance). */
  balance(teamId: string): Promise<number> {
    return recentBalance(this.#db, teamId, this.#now());
  }
}
