import type { StepRow } from "../../shared/workflows/definitions.ts";
import type { StartEvent, StepOverride } from "../../shared/workflows/start.ts";

/** The context a start gave its executions (a workflow_runs row). */
export interface RunContext {
  trigger_id: string;
  workflow_id: string;
  team_id: string;
  source: "api" | "event";
  sandbox: boolean;
  variables: Record<string, unknown>;
  channel_variables: Record<string, Record<string, unknown>>;
  steps_override: Record<string, StepOverride>;
  event: StartEvent | null;
  metadata: Record<string, unknown>;
}

/**
 * The event's fields as template variables: `event_name`, each `event_data` key both as itself and
 * as `event_data.<key>`, and `user_info.<key>`.
 */
function eventVariables(event: StartEvent | null): Record<string, unknown> {
  if (!event) return {};
  const vars: Record<string, unknown> = { ...event.data, event_name: event.name };
  for (const [k, v] of Object.entries(event.data)) vars[`event_data.${k}`] = v;
  for (const [k, v] of Object.entries(event.user_info)) vars[`user_info.${k}`] = v;
  return vars;
}

/**
 * The variables a step renders with, later ones winning: the event's data, the step's configured
 * variables, the start's `variables`, its `channel_variables` for the step's channel, and the
 * advanced send's override of that step. (Contact variables come last in precedence, from the
 * pipeline's renderer.)
 */
export function stepVariables(run: RunContext, step: StepRow): Record<string, unknown> {
  return {
    ...eventVariables(run.event),
    ...step.configuration.variables,
    ...run.variables,
    ...run.channel_variables[step.channel_type],
    ...run.steps_override[String(step.step_order)]?.variables,
  };
}

/** Whether a step runs for this start (the advanced send may switch it on or off). */
export function stepIsActive(run: RunContext, step: StepRow): boolean {
  return run.steps_override[String(step.step_order)]?.is_active ?? step.is_active;
}

/** A step's delay in milliseconds for this start. */
export function stepDelayMs(run: RunContext, step: StepRow): number {
  const minutes = run.steps_override[String(step.step_order)]?.delay_minutes ?? step.configuration.delay_minutes ?? 0;
  return Math.round(minutes * 60_000);
}

/** The first step that runs after `after` (0: the first of all), or undefined when none is left. */
export function nextStep(run: RunContext, steps: StepRow[], after: number): StepRow | undefined {
  return steps.find((s) => s.step_order > after && stepIsActive(run, s));
}
