import { createRoute, z } from "@hono/zod-openapi";
import { type ContactFilters, listContacts, listContactsByPage } from "../../shared/contacts/list.ts";
import { createContactWithDevices } from "../../shared/contacts/device_tokens.ts";
import { deleteContact, findContact, updateContact } from "../../shared/contacts/queries.ts";
import type { Deps } from "../../shared/deps.ts";
import { newRouter } from "../../shared/http/app.ts";
import { actionsRoutes, devicesOf } from "./actions_routes.ts";
import { preferencesRoutes } from "./preferences_routes.ts";
import { byExternalId, byId, found } from "./refs.ts";
import {
  Contact,
  contactBody,
  ContactList,
  CreateContactBody,
  Deleted,
  DeleteQuery,
  errors,
  ExternalIdParams,
  IdParams,
  ListQuery,
  UpdateContactBody,
} from "./schemas.ts";
import { jsonBody, jsonResponse } from "../../shared/http/schemas.ts";
import { parseTimestamp } from "../../shared/timestamps.ts";
import { externalIdNote, tag } from "../../shared/http/openapi.ts";

const tags = tag("Contacts");

function listFilters(q: z.infer<typeof ListQuery>): ContactFilters {
  const list = (v: string | string[] | undefined) => (v === undefined ? [] : Array.isArray(v) ? v : [v]);
  const wanted = [...list(q.tag), ...list(q.tags).flatMap((t) => t.split(","))].map((t) => t.trim()).filter(Boolean);
  return {
    tags: [...new Set(wanted)],
    isActive: q.is_active === undefined ? undefined : q.is_active === "true",
    isUnsubscribed: q.is_unsubscribed === undefined ? undefined : q.is_unsubscribed === "true",
    search: q.search || undefined,
    createdAfter: q.created_after ? new Date(parseTimestamp(q.created_after)!) : undefined,
    createdBefore: q.created_before ? new Date(parseTimestamp(q.created_before)!) : undefined,
    email: q.email || undefined,
  };
}

/** Contacts endpoints under /api/v1/contacts. */
export function contactsRoutes(deps: Deps) {
  const app = newRouter();
  const db = deps.sql;

  app.openapi(
    createRoute({
      method: "post",
      path: "/",
      tags,
      summary: "Create a contact",
      description:
        "Creates a contact of the key's team. `email` is required and unique in the team (case-insensitive), like " +
        "`external_id`; without an `external_id` one is generated. Every preference starts opted in, except " +
        "promotional email, WhatsApp and push. 409 when the email or external id is taken.",
      request: { body: jsonBody(CreateContactBody) },
      responses: { 201: jsonResponse(Contact, "The contact"), ...errors(400, 409, 422) },
    }),
    async (c) => {
      const { fcm_token, apns_token, ...body } = c.req.valid("json");
      const metadata = { ...body.metadata, created_via: "api_key", api_key_id: c.get("apiKey").id };
      const devices = devicesOf({ fcm_token, apns_token });
      const row = await createContactWithDevices(deps.sql, c.get("team").id, { ...body, metadata }, devices);
      return c.json(contactBody(row), 201);
    },
  );

  app.openapi(
    createRoute({
      method: "get",
      path: "/",
      tags,
      summary: "List contacts (cursor mode, or page mode when `page` is given)",
      description:
        "Newest first. Cursor mode: pass the previous page's `next_cursor` as `starting_after`. Page mode: pass " +
        "`page` (and `sort_by`, `sort_order`) for `pagination` totals. `search` matches names, email and external " +
        "id; `tag` or `tags=a,b` keep contacts carrying all of them.",
      request: { query: ListQuery },
      responses: { 200: jsonResponse(ContactList, "A page of contacts"), ...errors(400, 403) },
    }),
    async (c) => {
      const q = c.req.valid("query");
      const filters = listFilters(q);
      if (q.page === undefined) {
        const page = await listContacts(db, c.get("team").id, {
          limit: q.limit,
          startingAfter: q.starting_after,
          filters,
        });
        return c.json(page, 200);
      }
      const sortOrder = q.sort_order.toUpperCase() as "ASC" | "DESC";
      const { total, ...page } = await listContactsByPage(db, c.get("team").id, {
        page: q.page,
        limit: q.limit,
        sortBy: q.sort_by,
        sortOrder,
        filters,
      });
      const pagination = { page: q.page, limit: q.limit, total, totalPages: Math.ceil(total / q.limit) };
      return c.json({ ...page, pagination }, 200);
    },
  );

  // /external/{external_id} routes come before /{id} ones, so that "external" is never taken for an id.
  app.openapi(getRoute("/external/{external_id}", ExternalIdParams), async (c) => {
    const row = await findContact(db, c.get("team").id, byExternalId(c.req.valid("param").external_id));
    return c.json(contactBody(found(row)), 200);
  });
  app.openapi(updateRoute("patch", "/external/{external_id}", ExternalIdParams), async (c) => {
    const ref = byExternalId(c.req.valid("param").external_id);
    const row = await updateContact(db, c.get("team").id, ref, c.req.valid("json"));
    return c.json(contactBody(found(row)), 200);
  });
  app.openapi(deleteRoute("/external/{external_id}", ExternalIdParams), async (c) => {
    const id = found(await deleteContact(db, c.get("team").id, byExternalId(c.req.valid("param").external_id)));
    return c.json({ deleted: true as const, id }, 200);
  });

  app.route("/", preferencesRoutes(deps));
  app.route("/", actionsRoutes(deps));

  app.openapi(getRoute("/{id}", IdParams), async (c) => {
    const row = await findContact(db, c.get("team").id, byId(c.req.valid("param").id));
    return c.json(contactBody(found(row)), 200);
  });
  for (const method of ["put", "patch"] as const) {
    app.openapi(updateRoute(method, "/{id}", IdParams), async (c) => {
      const row = await updateContact(db, c.get("team").id, byId(c.req.valid("param").id), c.req.valid("json"));
      return c.json(contactBody(found(row)), 200);
    });
  }
  app.openapi(deleteRoute("/{id}", IdParams), async (c) => {
    const id = found(await deleteContact(db, c.get("team").id, byId(c.req.valid("param").id)));
    return c.json({ deleted: true as const, id }, 200);
  });
  return app;
}

function getRoute<P extends string, S extends z.ZodObject>(path: P, params: S) {
  return createRoute({
    method: "get",
    path,
    tags,
    summary: `Get a contact${externalIdNote(path)}`,
    description:
      "The contact with its preferences. On `/contacts/{id}` the id is the contact's UUID, or its `external_id` " +
      "when no contact has that UUID.",
    request: { params },
    responses: { 200: jsonResponse(Contact, "The contact"), ...errors(403, 404) },
  });
}

function updateRoute<P extends string, S extends z.ZodObject>(method: "put" | "patch", path: P, params: S) {
  return createRoute({
    method,
    path,
    tags,
    summary: `Update a contact${externalIdNote(path)}`,
    description:
      "PUT and PATCH both change only the fields given; `tags` and `custom_fields` given replace the stored ones. " +
      "409 when a new email or external id is taken.",
    request: { params, body: jsonBody(UpdateContactBody) },
    responses: { 200: jsonResponse(Contact, "The updated contact"), ...errors(400, 403, 404, 409) },
  });
}

function deleteRoute<P extends string, S extends z.ZodObject>(path: P, params: S) {
  return createRoute({
    method: "delete",
    path,
    tags,
    summary: `Delete a contact permanently${externalIdNote(path)}`,
    description: "Deletion is permanent (`hard=true` is accepted and changes nothing); messages already sent " +
      "stay in the records without the contact. Set `is_active: false` instead to keep the contact but stop " +
      "sending to it.",
    request: { params, query: DeleteQuery },
    responses: { 200: jsonResponse(Deleted, "Deleted"), ...errors(403, 404) },
  });
}
