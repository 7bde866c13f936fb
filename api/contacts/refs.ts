import type { z } from "@hono/zod-openapi";
import type { ContactRef } from "../../shared/contacts/queries.ts";
import { NotFoundError } from "../../shared/errors.ts";
import { ExternalIdParams, IdParams } from "./schemas.ts";

/** `{id}` of a path: the contact id, tried as an external id when no contact has that id. */
export function byId(id: string): ContactRef {
  return { by: "id", value: id };
}

/** `{external_id}` of a path. */
export function byExternalId(externalId: string): ContactRef {
  return { by: "external_id", value: externalId };
}

/** The row, or 404 'Contact not found' when the team has no such contact. */
export function found<T>(row: T | undefined): T {
  if (row === undefined) throw new NotFoundError("Contact not found", "contact_not_found");
  return row;
}

/** One way a path names a contact: the base path, its parameters, and the contact they name. */
export interface ContactPath {
  base: string;
  params: z.ZodObject<Record<string, z.ZodString>>;
  refOf: (params: Record<string, string>) => ContactRef;
}

/** Routes about one contact stand under `/external/{external_id}` and under `/{id}`. */
export const CONTACT_PATHS: ContactPath[] = [
  { base: "/external/{external_id}", params: ExternalIdParams, refOf: (p) => byExternalId(p.external_id) },
  { base: "/{id}", params: IdParams, refOf: (p) => byId(p.id) },
];
