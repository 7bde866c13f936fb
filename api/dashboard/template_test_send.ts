import type { ApiKey, Deps, Team } from "../../shared/deps.ts";
import type { Db } from "../../shared/db.ts";
import { AppError } from "../../shared/errors.ts";
import type { Channel } from "../../shared/providers/types.ts";
import type { Template } from "../../shared/templates.ts";
import { messagesRoutes } from "../messages/routes.ts";
import { pushRoutes } from "../push/routes.ts";
import { type SendHandler, sendHandlerOf } from "../sending/send_route.ts";
import { smsRoutes } from "../sms/routes.ts";
import { whatsappRoutes } from "../whatsapp/routes.ts";
import { parseVariables, type Sample } from "./template_form.ts";

/** What a test send came to: the ids the API answered with, or why it was refused. */
export type TestSendResult =
  | { ok: true; triggerId: string; executionId?: string; warnings: string[] }
  | { ok: false; error: string };

/** The team's newest test secret key, and the team: the key a test send goes out under. */
async function teamTestKey(db: Db, teamId: string): Promise<{ apiKey: ApiKey; team: Team } | undefined> {
  const [row]: [{ id: string; prefix: string; name: string; plan: Team["plan"] }?] = await db`
    select k.id, k.prefix, t.name, t.plan from api_keys k join teams t on t.id = k.team_id
    where k.team_id = ${teamId} and k.kind = 'sk_test' and k.revoked_at is null
    order by k.created_at desc limit 1`;
  if (!row) return undefined;
  return {
    apiKey: { id: row.id, prefix: row.prefix, kind: "sk_test", secret: true, test: true },
    team: { id: teamId, name: row.name, plan: row.plan },
  };
}

const routes = new WeakMap<Deps, Record<Channel, SendHandler>>();

/** The POST /send of a channel's router: the very work the API runs. */
function sendRouteOf(router: { routes: { method: string; path: string; handler: object }[] }): SendHandler {
  for (const { method, path, handler } of router.routes) {
    const route = method === "POST" && path === "/send" ? sendHandlerOf(handler) : undefined;
    if (route) return route;
  }
  throw new Error("a channel router has no POST /send route");
}

/** Each channel's send route, built once per deps. */
function sendRoutes(deps: Deps): Record<Channel, SendHandler> {
  let found = routes.get(deps);
  if (!found) {
    found = {
      email: sendRouteOf(messagesRoutes(deps)),
      sms: sendRouteOf(smsRoutes(deps)),
      whatsapp: sendRouteOf(whatsappRoutes(deps)),
      push: sendRouteOf(pushRoutes(deps)),
    };
    routes.set(deps, found);
  }
  return found;
}

/** The send request body the API would get for one test of `template` to the sample's address. */
function sendBody(template: Template, sample: Sample): Record<string, unknown> {
  const common = {
    template_key: template.key,
    variables: parseVariables(sample.variablesText),
    direct_first_name: sample.firstName || undefined,
    direct_last_name: sample.lastName || undefined,
    metadata: { source: "dashboard test send" },
  };
  switch (template.channel) {
    case "email":
      return { ...common, recipient_type: "direct_email", direct_email: sample.to };
    case "sms":
      return { ...common, recipient_type: "direct_sms", direct_phone: sample.to };
    case "whatsapp":
      return {
        ...common,
        recipient_type: "direct_whatsapp",
        direct_whatsapp: sample.to,
        conversation_category: template.category ?? "UTILITY",
      };
    case "push":
      return { ...common, recipient_type: "direct_push", direct_device_token: sample.to };
  }
}

/**
 * Sends the stored `template` once to the sample's address through the channel's own send route,
 * under the team's test key: sandboxed (recorded in the outbox, never delivered nor charged) exactly
 * as a request with that key would be.
 */
export async function sendTest(deps: Deps, template: Template, sample: Sample): Promise<TestSendResult> {
  if (sample.to === "") return { ok: false, error: "Enter the address to send the test to" };
  const key = await teamTestKey(deps.sql, template.team_id);
  if (!key) {
    return {
      ok: false,
      error: "Your team has no test secret key (sk_test) to send with: an owner can create one on the API keys page",
    };
  }
  const route = sendRoutes(deps)[template.channel];
  const body = route.body.safeParse(sendBody(template, sample));
  if (!body.success) return { ok: false, error: body.error.issues.map((i) => i.message).join("; ") };
  try {
    const answer = await route.accept(body.data, key.team, key.apiKey) as {
      trigger_id: string;
      execution_id?: string;
      warnings?: string[];
    };
    return {
      ok: true,
      triggerId: answer.trigger_id,
      executionId: answer.execution_id,
      warnings: answer.warnings ?? [],
    };
  } catch (err) {
    if (err instanceof AppError) return { ok: false, error: err.message };
    throw err;
  }
}
