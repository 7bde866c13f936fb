import type { Template } from "../../shared/templates.ts";
import { CHANNEL_NAMES } from "./template_list.tsx";
import type { StepDraft } from "./workflow_form.ts";
import { STEP_CHANNELS, type StepTemplates } from "./workflow_queries.ts";

/** The name of a step channel on the pages (an unknown one as it is). */
export function channelName(channel: string): string {
  return (CHANNEL_NAMES as Record<string, string>)[channel] ?? channel;
}

/** Whether `template` is the one a step names (by key, or by id as the API also takes). */
function names(template: Template, name: string): boolean {
  return template.key === name || template.id === name;
}

/**
 * The team's templates, one group per channel: without script the list cannot follow the channel
 * chosen, so every channel's are offered and the save checks that the template is of the step's
 * channel (as the API does). A step naming a template that is gone keeps it, marked missing, so
 * that the form shows what the step holds.
 */
function TemplateSelect(props: { id: string; draft: StepDraft; templates: StepTemplates }) {
  const { draft, templates } = props;
  const known = STEP_CHANNELS.some((c) => templates[c].some((t) => names(t, draft.template)));
  return (
    <select id={props.id} name="template" required>
      {draft.template === "" && <option value="">Choose a template</option>}
      {!known && draft.template !== "" && (
        <option value={draft.template} selected>
          {draft.template} (missing: no such template now)
        </option>
      )}
      {STEP_CHANNELS.map((channel) => (
        <optgroup label={channelName(channel)} key={channel}>
          {templates[channel].map((t) => {
            const chosen = draft.channel === channel && names(t, draft.template);
            return (
              <option key={t.id} value={chosen ? draft.template : t.key} selected={chosen}>
                {t.key}
                {t.status === "approved" ? "" : ` (${t.status})`}
              </option>
            );
          })}
        </optgroup>
      ))}
    </select>
  );
}

/**
 * The fields of one step: name, channel, template, delay and whether it runs; `prefix` keeps the
 * ids of several steps' forms on one page apart.
 */
export function StepFields(props: { prefix: string; draft: StepDraft; templates: StepTemplates }) {
  const { prefix, draft } = props;
  const id = (name: string) => `${prefix}-${name}`;
  return (
    <>
      <div class="row">
        <div class="field">
          <label for={id("name")}>Name</label>
          <input id={id("name")} name="step_name" value={draft.step_name} maxlength={200} placeholder="Step name" />
        </div>
        <div class="field">
          <label for={id("channel")}>Channel</label>
          <select id={id("channel")} name="channel">
            {STEP_CHANNELS.map((c) => <option key={c} value={c} selected={c === draft.channel}>{channelName(c)}
            </option>)}
          </select>
        </div>
        <div class="field">
          <label for={id("template")}>Template</label>
          <TemplateSelect id={id("template")} draft={draft} templates={props.templates} />
        </div>
        <div class="field">
          <label for={id("delay")}>Delay (minutes)</label>
          <p class="hint" id={`${id("delay")}-hint`}>After the step before (0: at once).</p>
          <input
            id={id("delay")}
            name="delay_minutes"
            type="number"
            min="0"
            step="any"
            inputmode="decimal"
            value={draft.delay_minutes}
            aria-describedby={`${id("delay")}-hint`}
          />
        </div>
      </div>
      <div class="field check">
        <input id={id("active")} name="is_active" type="checkbox" value="on" checked={draft.is_active} />
        <label for={id("active")}>Active (an inactive step is skipped)</label>
      </div>
    </>
  );
}
