import type { Channel } from "../../shared/providers/types.ts";
import { CATEGORIES, type Draft } from "./template_form.ts";

/** A labelled text input, or a textarea when `rows` is given, with its hint read out with it. */
export function TextField(
  props: { name: string; label: string; value: string; hint?: string; rows?: number; required?: boolean },
) {
  const id = `field-${props.name}`;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.hint && <p class="hint" id={`${id}-hint`}>{props.hint}</p>}
      {props.rows
        ? (
          <textarea
            id={id}
            name={props.name}
            rows={props.rows}
            required={props.required}
            aria-describedby={props.hint ? `${id}-hint` : undefined}
          >
            {props.value}
          </textarea>
        )
        : (
          <input
            id={id}
            name={props.name}
            value={props.value}
            required={props.required}
            aria-describedby={props.hint ? `${id}-hint` : undefined}
          />
        )}
    </div>
  );
}

function Variations(props: { rows: [string, string][] }) {
  // One blank row more than the draft has: without script, another appears after each save or preview.
  const rows = [...props.rows, ["", ""] as [string, string]];
  return (
    <fieldset>
      <legend>Country variations</legend>
      <p class="hint">
        With any variation, only the countries listed are served (a number of another country fails); without any, the
        text above serves every country.
      </p>
      {rows.map(([country, text], i) => (
        <div class="variation" key={i}>
          <div class="field country">
            <label for={`variation_country_${i}`}>Country</label>
            <input
              id={`variation_country_${i}`}
              name={`variation_country_${i}`}
              value={country}
              maxlength={2}
              placeholder="DE"
              autocomplete="off"
            />
          </div>
          <div class="field">
            <label for={`variation_body_${i}`}>Text for that country</label>
            <textarea id={`variation_body_${i}`} name={`variation_body_${i}`} rows={2}>{text}</textarea>
          </div>
        </div>
      ))}
    </fieldset>
  );
}

/** The fields of a channel's template. */
export function ChannelFields(props: { channel: Channel; draft: Draft }) {
  const { channel, draft } = props;
  switch (channel) {
    case "email":
      return (
        <>
          <TextField name="subject" label="Subject" value={draft.subject} required />
          <TextField name="html" label="HTML body" value={draft.html} rows={8} required />
          <TextField
            name="text"
            label="Plain-text body (optional)"
            value={draft.text}
            rows={4}
            hint="For mail readers that show no HTML."
          />
        </>
      );
    case "sms":
      return (
        <>
          <TextField
            name="body"
            label="Text"
            value={draft.body}
            rows={4}
            required
            hint="160 GSM-7 characters make one segment (153 each when split); any other character (an emoji, ç…) makes it UCS-2: 70 (67)."
          />
          <Variations rows={draft.variations} />
        </>
      );
    case "whatsapp":
      return (
        <>
          <TextField
            name="body"
            label="Text"
            value={draft.body}
            rows={5}
            required
            hint="Numbered placeholders {{1}}, {{2}} are filled from the variables 1, 2."
          />
          <div class="field">
            <label for="field-category">Category</label>
            <p class="hint" id="field-category-hint">
              Sends must name the same conversation_category; each category has its own price per conversation.
            </p>
            <select id="field-category" name="category" aria-describedby="field-category-hint">
              <option value="" selected={draft.category === ""}>Choose…</option>
              {CATEGORIES.map((c) => <option key={c} value={c} selected={draft.category === c}>{c}</option>)}
            </select>
          </div>
        </>
      );
    case "push":
      return (
        <>
          <TextField name="title" label="Title" value={draft.title} required />
          <TextField name="body" label="Body" value={draft.body} rows={3} required />
        </>
      );
  }
}
