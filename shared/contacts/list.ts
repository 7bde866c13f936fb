import type postgres from "postgres";
import type { Db } from "../db.ts";
import { ValidationError } from "../errors.ts";
import type { ContactRow } from "./queries.ts";

/** A contact as lists show it. */
export type ContactListRow = Pick<
  ContactRow,
  "id" | "external_id" | "email" | "first_name" | "last_name" | "tags" | "is_active" | "created_at"
>;

/** What a contact list may be narrowed by. */
export interface ContactFilters {
  /** Contacts carrying every one of these tags. */
  tags?: string[];
  isActive?: boolean;
  isUnsubscribed?: boolean;
  /** Case-insensitive substring of first name, last name, email or external id. */
  search?: string;
  createdAfter?: Date;
  createdBefore?: Date;
  /** Exact email, case-insensitive. */
  email?: string;
  /** A phone number's digits: contacts whose `custom_fields.phone` has the same (contacts_team_phone_digits). */
  phoneDigits?: string;
}

/** Columns a page-mode list may be sorted by. */
export const SORT_COLUMNS = ["created_at", "updated_at", "email", "first_name", "last_name"] as const;

/** One page of contacts in cursor mode. */
export interface ContactPage {
  data: ContactListRow[];
  has_more: boolean;
  next_cursor: string | null;
}

/** One page of contacts in page mode, with the total count. */
export interface NumberedContactPage extends ContactPage {
  total: number;
}

function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`);
}

/**
 * The four searched fields as one text: the expression of the trigram index contacts_search_trgm
 * (migration 027), which an ILIKE on it uses; change both together.
 */
export function contactSearchText(db: Db): postgres.Fragment {
  return db`(coalesce(first_name, '') || e'\\n' || coalesce(last_name, '') || e'\\n' || coalesce(email, '') || e'\\n' ||
    coalesce(external_id, ''))`;
}

function where(db: Db, teamId: string, f: ContactFilters): postgres.Fragment {
  // The fields are joined by newlines: a term's own newline (searched as a space) must not span two.
  const pattern = f.search ? `%${escapeLike(f.search.replaceAll("\n", " "))}%` : "";
  return db`team_id = ${teamId}
    ${f.tags && f.tags.length > 0 ? db`and tags @> ${f.tags}::text[]` : db``}
    ${f.isActive === undefined ? db`` : db`and is_active = ${f.isActive}`}
    ${f.isUnsubscribed === undefined ? db`` : db`and is_unsubscribed = ${f.isUnsubscribed}`}
    ${f.search ? db`and ${contactSearchText(db)} ilike ${pattern}` : db``}
    ${f.createdAfter ? db`and created_at > ${f.createdAfter}` : db``}
    ${f.createdBefore ? db`and created_at < ${f.createdBefore}` : db``}
    ${f.email ? db`and lower(email) = lower(${f.email})` : db``}
    ${
    f.phoneDigits
      ? db`and custom_fields ? 'phone'
        and regexp_replace(custom_fields ->> 'phone', '[^0-9]', '', 'g') = ${f.phoneDigits}`
      : db``
  }`;
}

const LIST_COLUMNS = ["id", "external_id", "email", "first_name", "last_name", "tags", "is_active", "created_at"];

/**
 * Newest first (`created_at desc, id desc`), after the contact `startingAfter` when given, by
 * keyset. A cursor that names no contact of the team is a 400 (never a silently empty page).
 */
export async function listContacts(
  db: Db,
  teamId: string,
  options: { limit: number; startingAfter?: string; filters?: ContactFilters },
): Promise<ContactPage> {
  const { limit, startingAfter } = options;
  const rows: ContactListRow[] = await db`
    select ${db(LIST_COLUMNS)} from contacts
    where ${where(db, teamId, options.filters ?? {})}
    ${
    startingAfter
      ? db`and (created_at, id) < (
          select created_at, id from contacts where team_id = ${teamId} and id = ${startingAfter}::uuid
        )`
      : db``
  }
    order by created_at desc, id desc
    limit ${limit + 1}`;
  if (rows.length === 0 && startingAfter) {
    const [cursor] = await db`select 1 from contacts where team_id = ${teamId} and id = ${startingAfter}::uuid`;
    if (!cursor) throw new ValidationError(["starting_after must be the id of one of your contacts"]);
  }
  return page(rows, limit);
}

function page(rows: ContactListRow[], limit: number): ContactPage {
  const hasMore = rows.length > limit;
  const data = hasMore ? rows.slice(0, limit) : rows;
  return { data, has_more: hasMore, next_cursor: hasMore ? data[data.length - 1].id : null };
}

/** Page `page` (from 1) of `limit` contacts, sorted by `sortBy` then id, with the total count. */
export async function listContactsByPage(
  db: Db,
  teamId: string,
  options: {
    page: number;
    limit: number;
    sortBy: typeof SORT_COLUMNS[number];
    sortOrder: "ASC" | "DESC";
    filters?: ContactFilters;
  },
): Promise<NumberedContactPage> {
  const { page: number, limit, sortBy } = options;
  const filters = options.filters ?? {};
  const direction = options.sortOrder === "ASC" ? db`asc` : db`desc`;
  const [rows, [{ total }]]: [ContactListRow[], [{ total: number }]] = await Promise.all([
    db<ContactListRow[]>`
      select ${db(LIST_COLUMNS)} from contacts
      where ${where(db, teamId, filters)}
      order by ${db(sortBy)} ${direction}, id ${direction}
      limit ${limit} offset ${(number - 1) * limit}`,
    db<[{ total: number }]>`select count(*)::int as total from contacts where ${where(db, teamId, filters)}`,
  ]);
  const hasMore = number * limit < total && rows.length > 0;
  return {
    data: rows,
    has_more: hasMore,
    next_cursor: hasMore ? rows[rows.length - 1].id : null,
    total,
  };
}
