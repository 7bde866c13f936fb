import { CreateWebhookBody } from "../webhooks/schemas.ts";
import { EVENT_TYPES } from "../../shared/webhook_events.ts";
import { BASE, CsrfField } from "./layout.tsx";
import type { SessionUser } from "./sessions.ts";

/** The new-endpoint form: a URL and the events (none ticked: every event, as the API's default). */
export function CreateEndpointForm(props: { user: SessionUser; error?: string; url?: string }) {
  return (
    <section class="card" aria-labelledby="create-endpoint-title">
      <h2 id="create-endpoint-title">Add an endpoint</h2>
      {props.error && <p class="card alert" role="alert" id="create-endpoint-error">{props.error}</p>}
      <form method="post" action={`${BASE}/webhooks`}>
        <CsrfField user={props.user} />
        <div class="field">
          <label for="endpoint-url">HTTPS URL</label>
          <input id="endpoint-url" name="url" type="url" required value={props.url ?? ""} autocomplete="off" />
        </div>
        <fieldset>
          <legend>Events</legend>
          <p class="hint">Tick none to receive every event, including ones added later.</p>
          {EVENT_TYPES.map((event) => (
            <label key={event}>
              <input type="checkbox" name="events" value={event} /> <code>{event}</code>
            </label>
          ))}
        </fieldset>
        <button type="submit">Add endpoint</button>
      </form>
    </section>
  );
}

/** The form's fields checked by the API's own schema: the body to register, or what is wrong. */
export function parseEndpointForm(form: Record<string, unknown>) {
  const ticked = ([] as unknown[]).concat(form["events"] ?? []).filter((e): e is string => typeof e === "string");
  const url = typeof form.url === "string" ? form.url.trim() : "";
  const parsed = CreateWebhookBody.safeParse({ url, events: ticked.length > 0 ? ticked : undefined });
  if (parsed.success) return { body: parsed.data, url };
  return { error: "Enter the endpoint's URL (https://…) and tick only events from the list.", url };
}
