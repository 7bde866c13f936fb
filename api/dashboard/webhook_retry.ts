import type { Deps } from "../../shared/deps.ts";
import { ConflictError, NotFoundError } from "../../shared/errors.ts";
import { enqueueDeliveries, packJobs } from "../../shared/webhook_events.ts";
import { deliveredEvents, type EndpointRow, findFailedAttempt } from "../webhooks/queries.ts";

/**
 * Sends the event of a failed delivery again, now: a delivery job of the worker's own kind (its
 * signing, its record of the attempt, its back-off if this one fails too), numbered as the attempt
 * after the one retried. Refused when the event was delivered since, or cannot be sent again.
 */
export async function retryDelivery(deps: Deps, endpoint: EndpointRow, attemptId: string): Promise<string> {
  const failed = await findFailedAttempt(deps.sql, endpoint.team_id, endpoint.id, attemptId);
  if (!failed) throw new NotFoundError("This endpoint has no failed delivery with that id", "delivery_not_found");
  if ((await deliveredEvents(deps.sql, endpoint.id, [failed.event_id])).has(failed.event_id)) {
    throw new ConflictError(`Event ${failed.event_id} was delivered by a later attempt: there is nothing to retry`);
  }
  if (!endpoint.is_active) {
    throw new ConflictError("This endpoint is turned off: turn it on again before retrying its deliveries");
  }
  if (!failed.event) {
    throw new ConflictError(
      `Event ${failed.event_id} failed before the service kept failed events, so it cannot be sent again`,
    );
  }
  const delivery = { endpoint_id: endpoint.id, event: failed.event };
  await enqueueDeliveries(deps, packJobs(endpoint.team_id, [delivery], failed.attempt + 1, deps.now()));
  return failed.event_id;
}
