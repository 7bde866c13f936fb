import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import { MAX_BODY_BYTES } from "../../shared/http/app.ts";
import {
  type ContactImport,
  createImport,
  findImport,
  KNOWN_COLUMNS,
  parseContactsCsv,
  resumeIfStale,
  runImport,
} from "./contact_import.ts";
import type { DashboardEnv } from "./env.ts";
import { BASE, CsrfField, MessagePage, Page, When } from "./layout.tsx";
import type { SessionUser } from "./sessions.ts";
import { Table } from "./table.tsx";

/** Seconds between two looks of a running import's page (it reloads itself: no script needed). */
const REFRESH_SECONDS = 2;

function percent(imp: ContactImport): number {
  return imp.total_rows === 0 ? 100 : Math.floor((imp.next_row / imp.total_rows) * 100);
}

/** The upload form and the team's latest imports, on the contacts page. */
export function ImportCard(props: { user: SessionUser; imports: ContactImport[]; error?: string }) {
  return (
    <section class="card" aria-labelledby="import-title">
      <h2 id="import-title">Import contacts from a CSV file</h2>
      <p class="muted">
        The first row names the columns:{" "}
        <code>{KNOWN_COLUMNS.join(", ")}</code>; any other column becomes a custom field. Only <code>email</code>{" "}
        is required; <code>tags</code>{" "}
        are separated by commas or semicolons. Contacts whose email or external id you already have are skipped, never
        changed. Files up to {MAX_BODY_BYTES / 1024 / 1024} MiB.
      </p>
      {props.error && <p class="alert" role="alert">{props.error}</p>}
      <form method="post" action={`${BASE}/contacts/imports`} enctype="multipart/form-data" class="row">
        <CsrfField user={props.user} />
        <div class="field grow">
          <label for="file">CSV file</label>
          <input id="file" name="file" type="file" accept=".csv,text/csv" required />
        </div>
        <button type="submit">Import</button>
      </form>
      {props.imports.length > 0 && (
        <ul class="imports">
          {props.imports.map((imp) => (
            <li key={imp.id}>
              <a href={`${BASE}/contacts/imports/${imp.id}`}>{imp.file_name}</a> <When at={imp.created_at} /> —{" "}
              {imp.status === "running" ? `${percent(imp)} %` : imp.status}, {imp.created_count} created,{" "}
              {imp.skipped.length} skipped
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function SkippedTable(props: { skipped: ContactImport["skipped"] }) {
  return (
    <Table headings={["Row", "Email", "Why"]} caption="Rows skipped">
      {props.skipped.map((s) => (
        <tr key={s.row}>
          <td data-label="Row">{s.row}</td>
          <td data-label="Email">{s.email}</td>
          <td data-label="Why">{s.reason}</td>
        </tr>
      ))}
    </Table>
  );
}

function ImportPage(props: { user: SessionUser; imp: ContactImport }) {
  const { imp } = props;
  const running = imp.status === "running";
  return (
    <Page
      title={`Import of ${imp.file_name}`}
      user={props.user}
      active="contacts"
      refresh={running ? REFRESH_SECONDS : undefined}
    >
      <p>
        <a href={`${BASE}/contacts`}>← Contacts</a>
      </p>
      <h1>Import of {imp.file_name}</h1>
      <section class="card" aria-labelledby="progress-title">
        <h2 id="progress-title">
          {running ? "Importing…" : imp.status === "done" ? "Import finished" : "Import failed"}
        </h2>
        <label for="progress">{imp.next_row} of {imp.total_rows} rows</label>
        <progress id="progress" max={imp.total_rows || 1} value={imp.total_rows === 0 ? 1 : imp.next_row}>
          {percent(imp)} %
        </progress>
        <p role="status" id="import-summary">
          {imp.created_count} created, {imp.skipped.length} skipped
          {running ? ". This page refreshes until the import is done; you can leave it, the import goes on." : "."}
        </p>
        {imp.error && <p class="alert" role="alert">{imp.error}</p>}
        {imp.total_rows === 0 && <p class="empty">The file has no rows below its header row.</p>}
      </section>
      {imp.skipped.length > 0 && (
        <section class="card" aria-labelledby="skipped-title">
          <h2 id="skipped-title">Rows skipped</h2>
          <p class="muted">Rows are numbered as a spreadsheet shows them: the header is row 1.</p>
          <SkippedTable skipped={imp.skipped} />
        </section>
      )}
    </Page>
  );
}

/** CSV imports: the upload, and an import's page with its progress and the report of rows skipped. */
export function importRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  app.post("/contacts/imports", async (c) => {
    const user = c.get("user");
    const file = (await c.req.parseBody()).file;
    const refuse = (error: string) => {
      const message = `${error} Go back to the contacts page and choose another file.`;
      return c.html(<MessagePage title="Cannot import this file" message={message} user={user} />, 400);
    };
    if (!(file instanceof File) || file.size === 0) return refuse("No file was chosen, or it is empty.");
    const csv = await file.text();
    const records = parseContactsCsv(csv);
    if (records.length > 0 && !("email" in records[0])) return refuse("The file has no email column.");
    const id = await createImport(deps.sql, user.teamId, {
      userId: user.id,
      fileName: file.name || "contacts.csv",
      csv,
      totalRows: records.length,
    });
    void runImport(deps, user.teamId, id);
    return c.redirect(`${BASE}/contacts/imports/${id}`, 303);
  });

  app.get("/contacts/imports/:id", async (c) => {
    const user = c.get("user");
    const imp = await findImport(deps.sql, user.teamId, c.req.param("id"));
    if (!imp) {
      const message = "Your team has no import with this id.";
      return c.html(<MessagePage title="Import not found" message={message} user={user} />, 404);
    }
    resumeIfStale(deps, imp);
    return c.html(<ImportPage user={user} imp={imp} />);
  });

  return app;
}
