import { sendSetupChanges } from "../../shared/changes.ts";
import type { Db } from "../../shared/db.ts";
import { asJson } from "../../shared/db.ts";

/** A DNS record a domain's owner publishes to prove it (Resend's SPF and DKIM, or our TXT). */
export interface DnsRecord {
  type: string;
  name: string;
  value: string;
  priority?: number;
  /** Resend's verdict on this record, when Resend checks it. */
  status?: string;
}

/** How a domain is proven: see 023_dashboard_webhooks_domains.sql. */
export type DomainMethod = "manual" | "resend" | "dns";

/** An email domain of a team, as the senders page shows it. */
export interface DomainRow {
  domain: string;
  verified: boolean;
  method: DomainMethod;
  dns_token: string | null;
  resend_domain_id: string | null;
  records: DnsRecord[] | null;
  status: string | null;
  checked_at: Date | null;
  created_at: Date;
}

/** What a verification check found. */
export interface DomainCheck {
  verified: boolean;
  status: string;
  records?: DnsRecord[];
}

/** The team's email domains, alphabetically. */
export async function listTeamDomains(db: Db, teamId: string): Promise<DomainRow[]> {
  return await db<DomainRow[]>`
    select domain, verified, method, dns_token, resend_domain_id, records, status, checked_at, created_at
    from email_domains where team_id = ${teamId} order by domain`;
}

/** The team's domain (names are kept in lower case); undefined when the team has none such. */
export async function findTeamDomain(db: Db, teamId: string, domain: string): Promise<DomainRow | undefined> {
  const [row]: [DomainRow?] = await db`
    select domain, verified, method, dns_token, resend_domain_id, records, status, checked_at, created_at
    from email_domains where team_id = ${teamId} and domain = ${domain.toLowerCase()}`;
  return row;
}

/** Adds a domain to verify; false when the team has it already. */
export async function insertDomain(
  db: Db,
  teamId: string,
  row: Pick<DomainRow, "domain" | "method" | "dns_token" | "resend_domain_id" | "records" | "status">,
): Promise<boolean> {
  const inserted = await db`
    insert into email_domains ${
    db({
      team_id: teamId,
      ...row,
      domain: row.domain.toLowerCase(),
      // A JSON array, not a Postgres one.
      records: row.records === null ? null : db.json(asJson(row.records)),
      verified: false,
    })
  }
    on conflict (team_id, domain) do nothing returning domain`;
  return inserted.length > 0;
}

/** Records a check's outcome; `verified` is what the email send checks from now on. */
export async function saveDomainCheck(db: Db, teamId: string, domain: string, check: DomainCheck): Promise<void> {
  await db`
    update email_domains set verified = ${check.verified}, status = ${check.status},
      ${check.records ? db`records = ${db.json(asJson(check.records))},` : db``} checked_at = now(), updated_at = now()
    where team_id = ${teamId} and domain = ${domain}`;
  sendSetupChanges.note();
}

/** Removes the team's domain (sends from it are refused at once); the row removed, if any. */
export async function deleteTeamDomain(db: Db, teamId: string, domain: string): Promise<DomainRow | undefined> {
  const [row]: [DomainRow?] = await db`
    delete from email_domains where team_id = ${teamId} and domain = ${domain.toLowerCase()}
    returning domain, verified, method, dns_token, resend_domain_id, records, status, checked_at, created_at`;
  sendSetupChanges.note();
  return row;
}
