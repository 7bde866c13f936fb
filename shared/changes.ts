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

  /** How many changes were noted. */
  get count(): number {
    return this.#count;
  }
}

/**
 * What a team sends with (templates, sender identities, domain verification), cached by the send
 * look-ups (shared/sending/lookups.ts): a send accepted after a change sees it, and one refused
 * before it ('not found', 'not approved') is not refused again from the cache.
 */
export const sendSetupChanges = new Changes();

/**
 * Workflow definitions (created, updated, deleted), cached by the worker (worker/workflows/cache.ts):
 * an event accepted after a deactivation never runs the workflow, nor misses one just created.
 */
export const workflowChanges = new Changes();
