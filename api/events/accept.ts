import type { ApiKey, Deps, Team } from "../../shared/deps.ts";
import { newSendIds } from "../../shared/sending/accept.ts";
import type { WorkflowStart } from "../../shared/workflows/start.ts";
import { workflowAcceptor } from "../workflows/acceptor.ts";
import type { SendEventData } from "./schemas.ts";

/** What accepting an event takes. */
export interface EventInput {
  team: Team;
  apiKey: ApiKey;
  event: SendEventData;
  /** Epoch milliseconds of `trigger_at`, when scheduled. */
  at?: number;
  now: number;
}

/**
 * Accepts an event through the workflow acceptor (group commit, no Postgres write unless
 * scheduled): the worker matches it to the workflows listening for it.
 */
export async function acceptEvent(deps: Deps, input: EventInput): Promise<{ triggerId: string; jobId: string }> {
  const ids = newSendIds();
  const { event } = input;
  const start: WorkflowStart = {
    ...ids,
    team_id: input.team.id,
    sandbox: input.apiKey.test,
    source: "event",
    event: {
      name: event.event_name,
      data: event.event_data ?? {},
      user_info: event.user_info ?? {},
      source: event.source ?? {},
    },
    variables: event.variables ?? {},
    channel_variables: {},
    steps_override: {},
    metadata: {},
    created_at: input.now,
    scheduled_for: input.at ?? null,
  };
  await workflowAcceptor(deps).accept(start, input.now);
  return { triggerId: ids.trigger_id, jobId: ids.job_id };
}
