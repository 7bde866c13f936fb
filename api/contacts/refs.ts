import type { ContactRef } from "../../shared/contacts/queries.ts";
import { NotFoundError } from "../../shared/errors.ts";

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
