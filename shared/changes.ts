/**
 * A count of the changes this process made to some stored set-up. A cache over that set-up
 * (`TtlCache`'s `forgetOn`) forgets what it holds when the count moves, so that work this process
 * does after a change sees it at once; a change made by another process is seen when the cache's
 * entries expire.
 */
export class Changes {
  #count = 0;

  /** Notes one change. */
  note(): void {
    this.#count++;
  }

  /** A reader that tells its cache when to forget: `moved()` is true once after each change (or run of them). */
  watch(): { moved(): boolean } {
    let seen = this.#count;
    return {
      moved: () => {
        if (this.#count === seen) return false;
        seen = this.#count;
        return true;
      },
    };
  }
}

/**
 * What a team sends with (templates, sender identities, domain verification), cached by the send
 * look-ups (shared/sending/lookups.ts): a send accepted after a change sees it, and one refused
 * before it ('not found', 'not approved') is not refused again from the cache.
 */
export const sendSetupChanges = new Changes();

/**
 * Workflow definitions (created, updated, deleted), cached by the worker (worker/workflows/cache.ts)
 * and by the event route's event types (api/workflows/event_types.ts): an event accepted after a
 * deactivation never runs the workflow, nor misses one just created.
 */
export const workflowChanges = new Changes();
