import { createRoute, type OpenAPIHono } from "@hono/zod-openapi";
import {
  type Category,
  findPreferences,
  type PreferenceChange,
  setAll,
  summarisePreferences,
  updatePreferences,
} from "../../shared/contacts/preferences.ts";
import type { ContactRef } from "../../shared/contacts/queries.ts";
import type { Channel } from "../../shared/providers/types.ts";
import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { CONTACT_PATHS, type ContactPath, found } from "./refs.ts";
import {
  CategoryParam,
  ChannelParam,
  Contact,
  contactBody,
  errors,
  orderedPreferences,
  PreferencesBody,
  PreferencesView,
  SubscribedBody,
} from "./schemas.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";
import { externalIdNote, tag } from "../../shared/http/openapi.ts";

const tags = tag("Contact preferences");
const updated = jsonResponse(Contact, "The updated contact");

/**
 * Preference endpoints, each under `/external/{external_id}` and under `/{id}` (publishable keys
 * may call all of them).
 */
export function preferencesRoutes(deps: Deps) {
  const app = newRouter();
  for (const path of CONTACT_PATHS) register(app, deps, path);
  return app;
}

function register(app: OpenAPIHono<AppEnv>, deps: Deps, { base, params, refOf }: ContactPath): void {
  const db = deps.sql;
  const withChannel = params.extend({ channel: ChannelParam });
  const withCategory = withChannel.extend({ category: CategoryParam });
  const change = async (teamId: string, ref: ContactRef, changes: PreferenceChange[]) =>
    contactBody(found(await updatePreferences(db, teamId, ref, changes)));

  app.openapi(
    createRoute({
      method: "get",
      path: `${base}/preferences`,
      tags,
      summary: `Read a contact's preferences, with counts${externalIdNote(base)}`,
      description:
        "The contact's opt-ins keyed by channel (`email`, `sms`, `whatsapp`, `push`), each with `transactional` and " +
        "`promotional`, and how many are on.",
      request: { params },
      responses: { 200: jsonResponse(PreferencesView, "The preferences"), ...errors(404) },
    }),
    async (c) => {
      const preferences = found(await findPreferences(db, c.get("team").id, refOf(c.req.valid("param"))));
      return c.json({ preferences: orderedPreferences(preferences), ...summarisePreferences(preferences) }, 200);
    },
  );

  for (const method of ["patch", "put"] as const) {
    app.openapi(
      createRoute({
        method,
        path: `${base}/preferences`,
        tags,
        summary: `Change preferences${externalIdNote(base)}`,
        description: "Body `{preferences: [{channel, category, subscribed}]}`: sets the listed (channel, " +
          "category) pairs and leaves the others as they are. Answers the updated contact.",
        request: { params, body: jsonBody(PreferencesBody) },
        responses: { 200: updated, ...errors(400, 404) },
      }),
      async (c) => {
        const { preferences } = c.req.valid("json");
        return c.json(await change(c.get("team").id, refOf(c.req.valid("param")), preferences), 200);
      },
    );
  }

  app.openapi(
    createRoute({
      method: "delete",
      path: `${base}/preferences`,
      tags,
      summary: `Unsubscribe from every channel and category${externalIdNote(base)}`,
      description: "Turns every preference off: the contact receives nothing until it opts in again.",
      request: { params },
      responses: { 200: updated, ...errors(404) },
    }),
    async (c) => c.json(await change(c.get("team").id, refOf(c.req.valid("param")), setAll(false)), 200),
  );

  app.openapi(
    createRoute({
      method: "post",
      path: `${base}/preferences/subscribe-all`,
      tags,
      summary: `Subscribe to every channel and category${externalIdNote(base)}`,
      description: "Turns every preference on, promotional ones included: only on the contact's own request.",
      request: { params },
      responses: { 200: updated, ...errors(404) },
    }),
    async (c) => c.json(await change(c.get("team").id, refOf(c.req.valid("param")), setAll(true)), 200),
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: `${base}/preferences/{channel}`,
      tags,
      summary: `Unsubscribe from both categories of one channel${externalIdNote(base)}`,
      description: "Turns off transactional and promotional messages on one channel.",
      request: { params: withChannel },
      responses: { 200: updated, ...errors(400, 404) },
    }),
    async (c) => {
      // Validated by withChannel; RefParams only widens its type to string.
      const p = c.req.valid("param");
      return c.json(await change(c.get("team").id, refOf(p), setAll(false, [p.channel as Channel])), 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: `${base}/preferences/{channel}/{category}`,
      tags,
      summary: `Set one preference${externalIdNote(base)}`,
      description: "Body `{subscribed}`: sets one (channel, category) pair; the others stay as they are.",
      request: { params: withCategory, body: jsonBody(SubscribedBody) },
      responses: { 200: updated, ...errors(400, 404) },
    }),
    async (c) => {
      const p = c.req.valid("param");
      const { subscribed } = c.req.valid("json");
      const changes = [{ channel: p.channel as Channel, category: p.category as Category, subscribed }];
      return c.json(await change(c.get("team").id, refOf(p), changes), 200);
    },
  );
}
