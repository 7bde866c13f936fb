import { createService } from "../../main.ts";
import type { Config } from "../../shared/config.ts";
import type { Deps } from "../../shared/deps.ts";
import { jsonRequest, randomEmail, testDeps, testTeam } from "../../shared/testing.ts";

/** What a test sees of an answer. */
export interface Answer {
  status: number;
  // deno-lint-ignore no-explicit-any
  body: any;
  headers: Headers;
}

/** Calls `/api/v1/contacts<path>` with an API key (and a JSON body when given). */
export type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<Answer>;

/** A caller bound to one API key of one app. */
export function caller(app: ReturnType<typeof createService>, key: string): Call {
  return async (method, path, body, headers = {}) => {
    const res = await app.request(
      `/api/v1/contacts${path}`,
      jsonRequest(method, body, { "X-API-Key": key, ...headers }),
    );
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
  };
}

/** A service with a fresh team, and callers for its secret, test and publishable keys. */
export async function contactsFixture(overrides: Partial<Config> = {}) {
  const deps: Deps = await testDeps(overrides);
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  return {
    deps,
    app,
    team,
    keys,
    call: caller(app, keys.live),
    sandbox: caller(app, keys.test),
    publishable: caller(app, keys.publishable),
  };
}

/** A create-contact body with a random email and external id. */
export function randomContact(overrides: Record<string, unknown> = {}): Record<string, unknown> & { email: string } {
  return {
    email: randomEmail(),
    external_id: `ext_${crypto.randomUUID().slice(0, 12)}`,
    first_name: "Ada",
    last_name: "Lovelace",
    ...overrides,
  };
}

/** Creates a contact through the API and returns its body (throws unless 201). */
export async function createdContact(call: Call, overrides: Record<string, unknown> = {}) {
  const res = await call("POST", "", randomContact(overrides));
  if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body;
}
