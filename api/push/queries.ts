import type { Db } from "../../shared/db.ts";
import { findSegment } from "../../shared/segments.ts";
import type { Recipient } from "../../shared/sending/spec.ts";

/**
 * True when at least one contact the recipient names has a push device (one EXISTS query): for a tag,
 * a segment or all, an active contact (an inactive one would only be filtered).
 */
export async function hasPushTokens(db: Db, teamId: string, recipient: Recipient): Promise<boolean> {
  let filter = db`c.team_id = ${teamId} and c.is_active`;
  switch (recipient.type) {
    case "direct":
      return true;
    case "contact":
      filter = db`c.team_id = ${teamId} and c.id = ${recipient.contact_id}`;
      break;
    case "tag":
      filter = db`c.team_id = ${teamId} and c.is_active and c.tags @> ${recipient.tags}::text[]`;
      break;
    case "segment": {
      const f = (await findSegment(db, teamId, recipient.segment_id))?.filter ?? {};
      filter = db`c.team_id = ${teamId} and c.is_active
        ${f.tags_all?.length ? db`and c.tags @> ${f.tags_all}::text[]` : db``}
        ${f.tags_any?.length ? db`and c.tags && ${f.tags_any}::text[]` : db``}
        ${f.is_active === undefined ? db`` : db`and c.is_active = ${f.is_active}`}`;
      break;
    }
    case "all":
      break;
  }
  const [row]: [{ found: boolean }] = await db`
    select exists (
      select 1 from contacts c join device_tokens d on d.contact_id = c.id where ${filter}
    ) as found`;
  return row.found;
}
