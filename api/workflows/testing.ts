import { createService } from "../../main.ts";
import type { Deps } from "../../shared/deps.ts";
import { upsertTemplate } from "../../shared/templates.ts";
import { jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";

/** A team with templates under `welcome` (and `reminder`) on every workflow channel, and its app. */
export async function workflowSetup(overrides: Partial<Deps["config"]> = {}) {
  const deps = await testDeps(overrides);
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  for (const key of ["welcome", "reminder"]) {
    await upsertTemplate(deps.sql, team.id, "email", key, {
      subject: `${key} {{contact_first_name}}`,
      html: `<p>${key} {{plan}}</p>`,
    });
    await upsertTemplate(deps.sql, team.id, "sms", key, { body: `${key} sms {{plan}}` });
    await upsertTemplate(deps.sql, team.id, "whatsapp", key, { body: `${key} wa {{1}}`, category: "UTILITY" });
  }
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await app.request(`/api/v1${path}`, jsonRequest(method, body, { "X-API-Key": keys.live, ...headers }));
    return { status: res.status, body: await res.json() };
  };
  return { deps, app, team, keys, call };
}

/** A valid create body: two steps (email, then SMS after `delay` minutes). */
export function workflowBody(overrides: Record<string, unknown> = {}) {
  return {
    name: `Onboarding ${crypto.randomUUID().slice(0, 6)}`,
    description: "Welcome new users",
    event_type: "user_signup",
    steps: [
      {
        step_order: 1,
        channel_type: "email",
        step_name: "Welcome email",
        configuration: { template_id: "welcome", delay_minutes: 0 },
      },
      {
        step_order: 2,
        channel_type: "sms",
        step_name: "Reminder",
        configuration: { template_id: "reminder", delay_minutes: 60 },
      },
    ],
    ...overrides,
  };
}
