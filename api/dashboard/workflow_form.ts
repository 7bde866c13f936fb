import { AppError, ValidationError } from "../../shared/errors.ts";
import { validationError } from "../../shared/http/validation.ts";
import type { StepRow } from "../../shared/workflows/definitions.ts";
import {
  CreateWorkflowBody,
  type CreateWorkflowData,
  type StepInputData,
  UpdateWorkflowBody,
  type UpdateWorkflowData,
} from "../workflows/schemas.ts";
import { field } from "./form.ts";

/** What a step's form holds, as typed (the page shows it back as it was when refused). */
export interface StepDraft {
  step_name: string;
  channel: string;
  template: string;
  delay_minutes: string;
  is_active: boolean;
}

/** What the new-workflow form holds, as typed. */
export interface WorkflowDraft {
  name: string;
  event_type: string;
  is_active: boolean;
  step: StepDraft;
}

/** A blank step for the add-a-step and new-workflow forms. */
export function emptyStepDraft(): StepDraft {
  return { step_name: "", channel: "email", template: "", delay_minutes: "0", is_active: true };
}

/** A stored step as its form shows it. */
export function stepDraftOf(step: StepRow): StepDraft {
  return {
    step_name: step.step_name,
    channel: step.channel_type,
    template: step.configuration.template_id,
    delay_minutes: String(step.configuration.delay_minutes),
    is_active: step.is_active,
  };
}

/** A step's form as posted (`is_active` is a checkbox: absent when unticked). */
export function stepDraftFromForm(form: Record<string, unknown>): StepDraft {
  return {
    step_name: field(form, "step_name").trim(),
    channel: field(form, "channel"),
    template: field(form, "template"),
    delay_minutes: field(form, "delay_minutes").trim(),
    is_active: field(form, "is_active") !== "",
  };
}

/** The new-workflow form as posted. */
export function workflowDraftFromForm(form: Record<string, unknown>): WorkflowDraft {
  return {
    name: field(form, "name"),
    event_type: field(form, "event_type"),
    // Named apart from the first step's own `is_active` box, which is on the same form.
    is_active: field(form, "workflow_active") !== "",
    step: stepDraftFromForm(form),
  };
}

/** A stored step as the API's step input, its other configuration (variables …) kept as it is. */
export function stepInputOf(step: StepRow): StepInputData {
  return {
    step_order: step.step_order,
    channel_type: step.channel_type,
    step_name: step.step_name,
    is_active: step.is_active,
    configuration: { ...step.configuration },
  };
}

/**
 * A step's form over what the step held (nothing for a new one): channel, template, delay, name and
 * activity from the form, everything else of the configuration kept. Not validated yet: the API's
 * schema does that, so a number that is not one is reported, not read as 0.
 */
function stepBody(draft: StepDraft, order: number, base?: StepInputData): unknown {
  const delay = draft.delay_minutes === "" ? 0 : Number(draft.delay_minutes);
  return {
    step_order: order,
    channel_type: draft.channel,
    ...(draft.step_name === "" ? {} : { step_name: draft.step_name }),
    is_active: draft.is_active,
    configuration: {
      ...base?.configuration,
      template_id: draft.template,
      delay_minutes: Number.isNaN(delay) ? draft.delay_minutes : delay,
    },
  };
}

/** How the pages name the fields the API's messages name. */
const LABELS: Record<string, string> = {
  name: "The name",
  event_type: "The event",
  step_name: "the step's name",
  channel_type: "the channel",
  template_id: "the template",
  delay_minutes: "the delay in minutes",
};

/** An API validation message in the page's words: `steps.1.configuration.delay_minutes …` → `Step 2: the delay …`. */
function inPageWords(line: string, orders: number[]): string {
  const step = /^steps\.(\d+)\.(?:configuration\.)?(\w+)(.*)$/s.exec(line);
  if (step) return `Step ${orders[Number(step[1])] ?? Number(step[1]) + 1}: ${LABELS[step[2]] ?? step[2]}${step[3]}`;
  const top = /^(\w+)(.*)$/s.exec(line);
  return top && LABELS[top[1]] ? `${LABELS[top[1]]}${top[2]}` : line;
}

/** The steps a refusal may name by index: their order and channel. */
export type Named = { step_order: number; channel_type: unknown }[];

/** The lines of a refusal, in the page's words. */
export function refusalLines(err: AppError, steps: Named): string[] {
  const lines = Array.isArray(err.body) ? err.body : [err.body];
  const field = (err.extra.details as { field?: string } | undefined)?.field;
  const index = /^steps\.(\d+)\.configuration\.template_id$/.exec(field ?? "")?.[1];
  if (err.code === "template_not_found" && index !== undefined) {
    // checkTemplates names the template; the page says which channel's templates the step may use.
    const step = steps[Number(index)];
    return [`Step ${step.step_order}: ${lines[0]} on the ${step.channel_type} channel: pick one listed under it.`];
  }
  return lines.map((line) => inPageWords(line, steps.map((s) => s.step_order)));
}

/** A valid body, or the reasons it is not. */
export type Checked<T> = { ok: true; body: T } | { ok: false; errors: string[] };

/** Steps edited on the page, checked by the API's own update schema. */
export function checkSteps(steps: unknown[]): Checked<UpdateWorkflowData> {
  const body = { steps };
  const parsed = UpdateWorkflowBody.safeParse(body);
  if (parsed.success) return { ok: true, body: parsed.data };
  return { ok: false, errors: refusalLines(validationError(parsed.error, body), steps as Named) };
}

/** The steps with the one of `order` replaced by its form (or added at the end), checked. */
export function stepsWith(stored: StepRow[], draft: StepDraft, order?: number): Checked<UpdateWorkflowData> {
  const inputs = stored.map(stepInputOf);
  const at = order === undefined ? -1 : inputs.findIndex((s) => s.step_order === order);
  const next = Math.max(0, ...inputs.map((s) => s.step_order)) + 1;
  const edited = stepBody(draft, at === -1 ? next : inputs[at].step_order, at === -1 ? undefined : inputs[at]);
  const steps: unknown[] = at === -1 ? [...inputs, edited] : inputs.map((s, i) => (i === at ? edited : s));
  return checkSteps(steps);
}

/** The steps without the one of `order`, checked (a workflow keeps at least one step). */
export function stepsWithout(stored: StepRow[], order: number): Checked<UpdateWorkflowData> {
  if (stored.length <= 1) {
    return { ok: false, errors: ["A workflow needs at least one step: add another before removing this one."] };
  }
  return checkSteps(stored.filter((s) => s.step_order !== order).map(stepInputOf));
}

/** A new workflow from its form (name, event and a first step), checked by the API's create schema. */
export function checkNewWorkflow(draft: WorkflowDraft): Checked<CreateWorkflowData> {
  const body = {
    name: draft.name,
    event_type: draft.event_type,
    is_active: draft.is_active,
    steps: [stepBody(draft.step, 1)],
  };
  const parsed = CreateWorkflowBody.safeParse(body);
  if (parsed.success) return { ok: true, body: parsed.data };
  return { ok: false, errors: refusalLines(validationError(parsed.error, body), body.steps as Named) };
}

/** The reasons of an API refusal (a template not found …) as page lines; anything else is thrown on. */
export function refusalOf(err: unknown, steps: Named): string[] {
  if (err instanceof ValidationError) return refusalLines(err, steps);
  throw err;
}
