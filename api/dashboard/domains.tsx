import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { isDomainName } from "../../shared/email.ts";
import { ConflictError, ValidationError } from "../../shared/errors.ts";
import { deleteTeamDomain, type DomainRow, findTeamDomain, insertDomain, saveDomainCheck } from "./domain_queries.ts";
import { checkVerification, domainMethod, startVerification, stopVerification } from "./domain_verification.ts";
import type { DashboardEnv } from "./env.ts";
import { field } from "./form.ts";
import { BASE, CsrfField, MessagePage, When } from "./layout.tsx";
import { Table } from "./table.tsx";
import { Badge } from "./paging.tsx";
import type { SessionUser } from "./sessions.ts";

/** The anchor of a domain's row on the senders page. */
export function domainAnchor(domain: string): string {
  return `domain-${domain.replaceAll(".", "-")}`;
}

function Records(props: { records: NonNullable<DomainRow["records"]> }) {
  return (
    <Table caption="DNS records" headings={["Type", "Name", "Value", "Priority", "Status"]}>
      {props.records.map((r, i) => (
        <tr key={i}>
          <td data-label="Type">{r.type}</td>
          <td data-label="Name">
            <code>{r.name}</code>
          </td>
          <td data-label="Value">
            <code class="wrap">{r.value}</code>
          </td>
          <td data-label="Priority">{r.priority ?? ""}</td>
          <td data-label="Status">{r.status ? <Badge value={r.status} /> : ""}</td>
        </tr>
      ))}
    </Table>
  );
}

function DomainCard(props: { user: SessionUser; row: DomainRow }) {
  const { row, user } = props;
  const action = `${BASE}/senders/domains/${encodeURIComponent(row.domain)}`;
  return (
    <article class="domain" id={domainAnchor(row.domain)} aria-labelledby={`${domainAnchor(row.domain)}-title`}>
      <h3 id={`${domainAnchor(row.domain)}-title`}>
        {row.domain} {row.verified ? <Badge value="verified" /> : <Badge value="pending">not verified</Badge>}
      </h3>
      {row.method === "manual" && <p class="muted">Verified by the operator of the service.</p>}
      {row.method === "resend" && !row.verified && (
        <p>
          Add these records at your DNS provider, then press Check: Resend verifies them, which can take a few minutes.
        </p>
      )}
      {row.method === "dns" && !row.verified && (
        <p>
          Add this TXT record to <code>{row.domain}</code> at your DNS provider, then press Check.
        </p>
      )}
      {row.records && row.records.length > 0 && <Records records={row.records} />}
      {row.status && row.checked_at && (
        <p class="muted">
          Last check: {row.status} (<When at={row.checked_at} />)
        </p>
      )}
      <div class="row">
        {row.method !== "manual" && (
          <form method="post" action={`${action}/check`}>
            <CsrfField user={user} />
            <button type="submit" aria-label={`Check ${row.domain}`}>Check</button>
          </form>
        )}
        <form method="post" action={`${action}/delete`}>
          <CsrfField user={user} />
          <button type="submit" class="danger" aria-label={`Remove ${row.domain}`}>Remove</button>
        </form>
      </div>
    </article>
  );
}

/** The email domains of the senders page: each with the records to publish and its check. */
export function DomainsSection(props: { user: SessionUser; domains: DomainRow[]; resend: boolean }) {
  const { user, domains } = props;
  return (
    <section class="card" aria-labelledby="domains-title">
      <h2 id="domains-title">Email domains</h2>
      <p class="muted">
        Email is sent only from addresses on a verified domain of the team. {props.resend
          ? "Domains are verified by Resend, which sends the service's email: it asks for SPF and DKIM records."
          : "The service verifies a domain by a TXT record you add to it."}
      </p>
      {domains.length > 0
        ? domains.map((row) => <DomainCard key={row.domain} user={user} row={row} />)
        : (
          <div class="empty">
            <p>
              <strong>No email domains yet.</strong>
            </p>
            <p>Add the domain of your sender addresses below, publish the records it shows, then check it.</p>
          </div>
        )}
      <form method="post" action={`${BASE}/senders/domains`} class="row">
        <CsrfField user={user} />
        <div class="field">
          <label for="domain">Domain</label>
          <input id="domain" name="domain" placeholder="mail.example.com" autocomplete="off" required />
        </div>
        <button type="submit">Add the domain</button>
      </form>
    </section>
  );
}

/** The domain actions under /senders/domains; every member of the team may use them. */
export function domainRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();
  const back = (domain: string) => `${BASE}/senders#${domainAnchor(domain)}`;

  /** The team's domain of the path; undefined (a 404) for another team's, as for an unknown one. */
  const load = async (user: SessionUser, given: string | undefined) =>
    given ? await findTeamDomain(deps.sql, user.teamId, given) : undefined;
  const notFound = (user: SessionUser) => (
    <MessagePage title="Domain not found" message="This team has no email domain of that name." user={user} />
  );

  app.post("/senders/domains", async (c) => {
    const user = c.get("user");
    const domain = field(await c.req.parseBody(), "domain").trim().toLowerCase().replace(/\.$/, "");
    if (!isDomainName(domain)) throw new ValidationError(`${domain || "That"} is not a domain name, like example.com`);
    if (await findTeamDomain(deps.sql, user.teamId, domain)) {
      throw new ConflictError(`The team has ${domain} already: check it on the senders page`);
    }
    const row = await startVerification(deps, domain);
    if (!await insertDomain(deps.sql, user.teamId, row)) {
      throw new ConflictError(`The team has ${domain} already: check it on the senders page`);
    }
    return c.redirect(back(domain), 303);
  });

  app.post("/senders/domains/:domain/check", async (c) => {
    const user = c.get("user");
    const row = await load(user, c.req.param("domain"));
    if (!row) return c.html(notFound(user), 404);
    await saveDomainCheck(deps.sql, user.teamId, row.domain, await checkVerification(deps, row));
    return c.redirect(back(row.domain), 303);
  });

  app.post("/senders/domains/:domain/delete", async (c) => {
    const user = c.get("user");
    const row = await deleteTeamDomain(deps.sql, user.teamId, c.req.param("domain") ?? "");
    if (!row) return c.html(notFound(user), 404);
    await stopVerification(deps, row);
    return c.redirect(`${BASE}/senders`, 303);
  });

  return app;
}

/** Whether new domains go through Resend (the page says which way it verifies). */
export function verifiesWithResend(deps: Deps): boolean {
  return domainMethod(deps.config) === "resend";
}
