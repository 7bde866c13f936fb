/**
 * Proving a team owns an email domain: through Resend's domains API when the service sends email
 * with Resend (Resend then signs its mail: the SPF and DKIM records it asks for), otherwise by a TXT
 * record holding a token of ours, which the service looks up itself.
 */
import { Resend } from "resend";
import type { Config } from "../../shared/config.ts";
import type { Deps } from "../../shared/deps.ts";
import { ConflictError, ValidationError } from "../../shared/errors.ts";
import { log } from "../../shared/log.ts";
import type { DnsRecord, DomainCheck, DomainMethod, DomainRow } from "./domain_queries.ts";

const DEFAULT_RESEND_URL = "https://api.resend.com";
/** How long a call to Resend or a DNS look-up may take before the page says so. */
const TIMEOUT_MS = 10_000;
const timeout = () => AbortSignal.timeout(TIMEOUT_MS);

/** Resend's domain status once every record checks out. */
const VERIFIED = "verified";

/** The method the service uses for new domains: Resend's when it is configured. */
export function domainMethod(config: Config): Exclude<DomainMethod, "manual"> {
  return config.RESEND_API_KEY ? "resend" : "dns";
}

function resend(config: Config): Resend {
  // Always given a base URL, so the SDK never reads RESEND_BASE_URL from the environment itself.
  return new Resend(config.RESEND_API_KEY, { baseUrl: config.RESEND_BASE_URL ?? DEFAULT_RESEND_URL });
}

/** Resend's records, as the page lists them. */
function recordsOf(records: { type: string; name: string; value: string; priority?: number; status: string }[]) {
  return records.map((r): DnsRecord => ({
    type: r.type,
    name: r.name,
    value: r.value,
    ...(r.priority === undefined ? {} : { priority: r.priority }),
    status: r.status,
  }));
}

/** A new TXT token: what the domain's owner publishes. */
function newToken(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return `messaging-verification=${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

/** The row of a domain being added: registered at Resend (its records), or given a TXT token. */
export async function startVerification(
  deps: Deps,
  domain: string,
): Promise<Pick<DomainRow, "domain" | "method" | "dns_token" | "resend_domain_id" | "records" | "status">> {
  if (domainMethod(deps.config) === "dns") {
    const token = newToken();
    return {
      domain,
      method: "dns",
      dns_token: token,
      resend_domain_id: null,
      records: [{ type: "TXT", name: domain, value: token }],
      status: "not_started",
    };
  }
  const { data, error } = await resend(deps.config).domains.create({ name: domain }, { signal: timeout() });
  if (error) throw new ValidationError(`Resend did not add ${domain}: ${error.message}`, "resend_domain_refused");
  return {
    domain,
    method: "resend",
    dns_token: null,
    resend_domain_id: data.id,
    records: recordsOf(data.records),
    status: data.status,
  };
}

/**
 * Checks a domain now: asks Resend to verify it (unless it is at it already) and reads its status and
 * records, or looks up the TXT records of the domain for its token.
 */
export async function checkVerification(deps: Deps, row: DomainRow): Promise<DomainCheck> {
  if (row.method === "resend" && row.resend_domain_id) {
    if (!deps.config.RESEND_API_KEY) {
      throw new ConflictError("This domain was added through Resend, which the service no longer uses");
    }
    const client = resend(deps.config);
    const id = row.resend_domain_id;
    if (row.status !== "pending" && row.status !== VERIFIED) {
      const { error } = await client.domains.verify(id, { signal: timeout() });
      if (error) throw new ValidationError(`Resend did not check ${row.domain}: ${error.message}`);
    }
    const { data, error } = await client.domains.get(id, { signal: timeout() });
    if (error) throw new ValidationError(`Resend did not answer for ${row.domain}: ${error.message}`);
    return { verified: data.status === VERIFIED, status: data.status, records: recordsOf(data.records) };
  }
  if (row.method === "dns" && row.dns_token) {
    const resolve = deps.resolveTxt ??
      ((name: string) => Deno.resolveDns(name, "TXT", { signal: timeout() }));
    try {
      const found = (await resolve(row.domain)).map((chunks) => chunks.join(""));
      if (found.includes(row.dns_token)) return { verified: true, status: VERIFIED };
      return { verified: false, status: "The TXT records of the domain do not hold the token yet" };
    } catch (err) {
      // NotFound (no TXT record, or no such domain) is the usual answer before the record is published.
      log("info", "domain TXT look-up failed", { domain: row.domain, error: String(err) });
      const missing = err instanceof Deno.errors.NotFound;
      return { verified: false, status: missing ? "No TXT record found yet" : "The DNS look-up failed: try again" };
    }
  }
  throw new ConflictError("The operator verified this domain: there is nothing to check");
}

/** Removes a domain from Resend as well (best effort: a domain left there only stays unused). */
export async function stopVerification(deps: Deps, row: DomainRow): Promise<void> {
  if (row.method !== "resend" || !row.resend_domain_id || !deps.config.RESEND_API_KEY) return;
  const { error } = await resend(deps.config).domains.remove(row.resend_domain_id, { signal: timeout() });
  if (error) log("warn", "cannot remove a domain at Resend", { domain: row.domain, error: error.message });
}
