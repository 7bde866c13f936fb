let changes = 0;

/**
 * Notes that this process changed what a team sends with: a template, a sender identity or a
 * domain's verification. The send look-ups (shared/sending/lookups.ts) start afresh, so that a send
 * accepted after the change sees it (and one refused before it, 'not found' or 'not approved', is not
 * refused again from the cache). A change made by another process is seen within their few seconds.
 */
export function sendSetupChanged(): void {
  changes++;
}

/** How many times this process has changed a team's send set-up (see sendSetupChanged). */
export function sendSetupChanges(): number {
  return changes;
}
