import { type Changes, workflowChanges } from "../../shared/changes.ts";
import type { Db } from "../../shared/db.ts";
import { teamEventTypes } from "./queries.ts";

/** How long a team's known event types are trusted without reading them again. */
const TTL_MS = 30_000;

interface Entry {
  types: Set<string>;
  loadedAt: number;
}

/**
 * The event types configured per team (any workflow of the team with that event_type), kept in
 * memory so that accepting an event reads Postgres only for a name not seen lately. A name that
 * is not known is always read again, so a workflow created a moment ago is found at once; and
 * every team's types are forgotten once this process changes a workflow (`forgetOn`), so that one
 * deleted or renamed a moment ago is not taken either.
 */
export class EventTypeCache {
  #entries = new Map<string, Entry>();
  #changes: { moved(): boolean };

  constructor(forgetOn: Changes) {
    this.#changes = forgetOn.watch();
  }

  /** True when the team has a workflow listening to `name`. */
  async has(db: Db, teamId: string, name: string, now: number): Promise<boolean> {
    if (this.#changes.moved()) this.#entries.clear();
    const entry = this.#entries.get(teamId);
    if (entry && now - entry.loadedAt < TTL_MS && entry.types.has(name)) return true;
    const types = new Set(await teamEventTypes(db, teamId));
    this.#entries.set(teamId, { types, loadedAt: now });
    return types.has(name);
  }
}

/** The cache shared by the workflow and event routes of this process. */
export const eventTypes = new EventTypeCache(workflowChanges);
