import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import { createContacts } from "../../shared/contacts/bulk.ts";
import { DEFAULT_PLATFORM, type DeviceTokenInput, registerDeviceTokens } from "../../shared/contacts/device_tokens.ts";
import { addTags, type NewContact, removeTags, updateContact } from "../../shared/contacts/queries.ts";
import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";
import type { AppEnv } from "../../shared/http/env.ts";
import { CONTACT_PATHS, type ContactPath, found } from "./refs.ts";
import {
  BulkAnswer,
  BulkBody,
  Contact,
  contactBody,
  ContactWithDevices,
  CreateEmail,
  DeviceTokenBody,
  errors,
  ExternalIdParams,
  TagsBody,
} from "./schemas.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";
import { externalIdNote, tag } from "../../shared/http/openapi.ts";

const tags = tag("Contacts");
const updated = jsonResponse(Contact, "The updated contact");

/** Tags, unsubscribe, bulk creation and device tokens. */
export function actionsRoutes(deps: Deps) {
  const app = newRouter();
  const db = deps.sql;

  app.openapi(
    createRoute({
      method: "post",
      path: "/bulk",
      tags,
      summary: "Create up to 1,000 contacts; existing ones are skipped, invalid ones reported",
      description:
        "One call for many contacts: each is created, skipped (its email or external id exists) or reported as an " +
        "error (invalid), and the answer counts each kind. An invalid entry does not fail the others.",
      request: { body: jsonBody(BulkBody) },
      responses: { 200: jsonResponse(BulkAnswer, "What was created, skipped and refused"), ...errors(400, 403) },
    }),
    async (c) => {
      const { contacts } = c.req.valid("json");
      const failed: { email: string | null; error: string }[] = [];
      const valid: NewContact[] = [];
      for (const entry of contacts) {
        const email = CreateEmail.safeParse(entry.email);
        if (!email.success) {
          failed.push({ email: entry.email ?? null, error: email.error.issues[0].message });
          continue;
        }
        const metadata = { ...entry.metadata, created_via: "api_key", api_key_id: c.get("apiKey").id };
        valid.push({ ...entry, email: email.data, metadata });
      }
      const { created, skipped } = await createContacts(db, c.get("team").id, valid);
      return c.json({
        created: created.map(contactBody),
        skipped,
        errors: failed,
        total_processed: contacts.length,
        summary: { created_count: created.length, skipped_count: skipped.length, error_count: failed.length },
      }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/external/{external_id}/device-token",
      tags,
      summary: "Register push devices: `{token, platform, …}` or `{fcm_token?, apns_token?}`",
      description:
        "Adds a device token to the contact (one per device; a push to the contact goes to all of them). The token " +
        "is 32–4,096 characters of `[A-Za-z0-9_:.-]`; an iOS (APNs) token is 64 hex characters.",
      request: { params: ExternalIdParams, body: jsonBody(DeviceTokenBody) },
      responses: { 200: jsonResponse(ContactWithDevices, "The contact and its devices"), ...errors(400, 403, 404) },
    }),
    async (c) => {
      const result = await registerDeviceTokens(
        deps.sql,
        c.get("team").id,
        c.req.valid("param").external_id,
        devicesOf(c.req.valid("json")),
      );
      const { contact, devices } = found(result);
      return c.json({ ...contactBody(contact), device_tokens: devices }, 200);
    },
  );

  for (const path of CONTACT_PATHS) register(app, deps, path);
  return app;
}

/**
 * The devices a body names (device-token, or a create), one per distinct token. An `fcm_token` is of
 * the body's `platform` when it names no `token` of its own (an iOS app using Firebase), else Android.
 */
export function devicesOf(body: Partial<z.output<typeof DeviceTokenBody>>): DeviceTokenInput[] {
  const about = { os_version: body.os_version, app_version: body.app_version, device_model: body.device_model };
  const devices: DeviceTokenInput[] = [];
  if (body.token !== undefined && body.platform !== undefined) {
    devices.push({ token: body.token, platform: body.platform, ...about });
  }
  if (body.fcm_token !== undefined) {
    const platform = body.token === undefined ? body.platform ?? DEFAULT_PLATFORM : DEFAULT_PLATFORM;
    devices.push({ token: body.fcm_token, platform, ...about });
  }
  if (body.apns_token !== undefined) devices.push({ token: body.apns_token, platform: "ios", ...about });
  return devices.filter((d, i) => devices.findIndex((e) => e.token === d.token) === i);
}

function register(app: OpenAPIHono<AppEnv>, deps: Deps, { base, params, refOf }: ContactPath): void {
  const db = deps.sql;
  app.openapi(
    createRoute({
      method: "post",
      path: `${base}/tags`,
      tags,
      summary: `Add tags${externalIdNote(base)}`,
      description:
        "Adds the tags the contact does not carry yet; tags drive `tag` sends, segments and workflow conditions." +
        "Adds the tags the contact does not carry yet; tags drive `tag` sends, segments and workflow conditions.",
      request: { params, body: jsonBody(TagsBody) },
      responses: { 200: updated, ...errors(400, 403, 404) },
    }),
    async (c) => {
      const row = await addTags(db, c.get("team").id, refOf(c.req.valid("param")), c.req.valid("json").tags);
      return c.json(contactBody(found(row)), 200);
    },
  );
  app.openapi(
    createRoute({
      method: "delete",
      path: `${base}/tags`,
      tags,
      summary: `Remove tags (JSON body \`{tags}\`)${externalIdNote(base)}`,
      description: "Removes the given tags from the contact; tags it does not carry are ignored.",
      request: { params, body: jsonBody(TagsBody) },
      responses: { 200: updated, ...errors(400, 403, 404) },
    }),
    async (c) => {
      const row = await removeTags(db, c.get("team").id, refOf(c.req.valid("param")), c.req.valid("json").tags);
      return c.json(contactBody(found(row)), 200);
    },
  );
  app.openapi(
    createRoute({
      method: "post",
      path: `${base}/unsubscribe`,
      tags,
      summary: `Unsubscribe the contact from everything${externalIdNote(base)}`,
      description:
        "Sets `is_unsubscribed` and `unsubscribed_at`: no send reaches it on any channel until it is subscribed again.",
      request: { params },
      responses: { 200: updated, ...errors(403, 404) },
    }),
    async (c) => {
      const row = await updateContact(db, c.get("team").id, refOf(c.req.valid("param")), { is_unsubscribed: true });
      return c.json(contactBody(found(row)), 200);
    },
  );
}
