import type { Context } from "hono";
import { CONTACT_TOKEN_HEADER, contactTokenFits } from "../contact_tokens.ts";
import { findContact } from "../contacts/queries.ts";
import type { Deps } from "../deps.ts";
import { UnauthorizedError } from "../errors.ts";
import { contactTokenSecret } from "../teams.ts";
import type { AppEnv } from "./env.ts";

/**
 * The external id of the contact a publishable-key request is about (its contact token is checked
 * against it), or undefined when the request names none. `param` is the path's contact reference.
 */
export type ContactSubject = (c: Context<AppEnv>, deps: Deps, param: string | undefined) => Promise<string | undefined>;

function decoded(param: string | undefined): string | undefined {
  if (param === undefined) return undefined;
  try {
    return decodeURIComponent(param);
  } catch {
    return undefined;
  }
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** The JSON body as an object, or undefined (the route's validation answers a bad one). */
async function bodyOf(c: Context<AppEnv>): Promise<Record<string, unknown> | undefined> {
  try {
    // Read as text, which Hono keeps for the route's validator and its hook.
    const body = JSON.parse(await c.req.text());
    return body !== null && typeof body === "object" ? body : undefined;
  } catch {
    return undefined;
  }
}

/** `/contacts/external/{external_id}…`: the external id itself. */
export const externalIdInPath: ContactSubject = (_c, _deps, param) => Promise.resolve(decoded(param));

/**
 * `/contacts/{id}…`: the external id of the contact the route will find (by id, else by external
 * id); a reference no contact has stands for itself, so a token of it fits only that same text.
 */
export const contactInPath: ContactSubject = async (c, deps, param) => {
  const ref = decoded(param);
  if (ref === undefined) return undefined;
  const row = await findContact(deps.sql, c.get("team").id, { by: "id", value: ref });
  return row?.external_id ?? ref;
};

/** `POST /contacts`: the body's `external_id` (one the service would generate cannot be known before). */
export const contactInBody: ContactSubject = async (c) => text((await bodyOf(c))?.external_id);

/**
 * `POST /events/send`: the contact the event reaches. The worker takes the contact with
 * `user_info.contact_external_id`, else the one with `user_info.email`: a token of an external id no
 * contact has must not reach another contact by email.
 */
export const eventContact: ContactSubject = async (c, deps) => {
  const info = (await bodyOf(c))?.user_info as Record<string, unknown> | undefined;
  const externalId = text(info?.contact_external_id);
  const email = text(info?.email);
  if (externalId === undefined || email === undefined) return externalId;
  const [row]: [{ external_id: string }?] = await deps.sql`
    select external_id from contacts
    where team_id = ${c.get("team").id} and (external_id = ${externalId} or lower(email) = lower(${email}))
    order by external_id = ${externalId} desc
    limit 1`;
  return row?.external_id ?? externalId;
};

/**
 * When the team requires contact tokens, refuses (401) a publishable-key request whose
 * X-Contact-Token is missing or is not the token of the contact it is about.
 */
export async function requireContactToken(
  c: Context<AppEnv>,
  deps: Deps,
  about: { subject: ContactSubject; param?: string },
): Promise<void> {
  const secret = await contactTokenSecret(deps.sql, c.get("team").id);
  if (secret === null) return;
  const token = c.req.header(CONTACT_TOKEN_HEADER)?.trim();
  if (!token) {
    throw new UnauthorizedError(
      `Missing ${CONTACT_TOKEN_HEADER}: this team requires a contact token with publishable keys`,
      "contact_token_required",
    );
  }
  const externalId = await about.subject(c, deps, about.param);
  if (externalId === undefined) {
    throw new UnauthorizedError(
      `Cannot check ${CONTACT_TOKEN_HEADER}: the request names no contact by external id`,
      "invalid_contact_token",
    );
  }
  if (!await contactTokenFits(secret, externalId, token)) {
    throw new UnauthorizedError(`Invalid ${CONTACT_TOKEN_HEADER} for this contact`, "invalid_contact_token");
  }
}
