import { Batcher } from "../batcher.ts";
import type { Db } from "../db.ts";
import type { ContactRow } from "./queries.ts";

interface Lookup {
  teamId: string;
  externalId: string;
  row?: ContactRow;
}

/** Look-ups answered by one query at most. */
const MAX_GROUP = 500;

/**
 * Finds contacts by external id for the accept path, the look-ups of concurrent requests in one
 * query per team (`external_id = any(...)`): on the embedded Postgres, whose pool is one
 * connection, 50 requests each waiting for their own query took turns on it. Read-only, so a
 * failed group (one caller's unstorable id) is run again one look-up at a time and only that
 * caller sees the error.
 */
export class ContactFinder {
  #db: Db;
  #groups: Batcher<Lookup>;

  constructor(db: Db) {
    this.#db = db;
    this.#groups = new Batcher((lookups) => this.#find(lookups), { maxWeight: MAX_GROUP, retryAlone: true });
  }

  /** The team's contact with this external id, or undefined. */
  async byExternalId(teamId: string, externalId: string): Promise<ContactRow | undefined> {
    const lookup: Lookup = { teamId, externalId };
    await this.#groups.add(lookup);
    return lookup.row;
  }

  async #find(lookups: Lookup[]): Promise<void> {
    const byTeam = new Map<string, Lookup[]>();
    for (const l of lookups) byTeam.set(l.teamId, [...byTeam.get(l.teamId) ?? [], l]);
    for (const [teamId, list] of byTeam) {
      const ids = [...new Set(list.map((l) => l.externalId))];
      const rows: ContactRow[] = await this.#db`
        select * from contacts where team_id = ${teamId} and external_id = any(${ids}::text[])`;
      const found = new Map(rows.map((r) => [r.external_id, r]));
      for (const l of list) l.row = found.get(l.externalId);
    }
  }
}
