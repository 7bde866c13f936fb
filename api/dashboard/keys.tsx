import { Hono } from "hono";
import { createApiKey, type KeyKind } from "../../shared/api_keys.ts";
import type { Deps } from "../../shared/deps.ts";
import { Table } from "./table.tsx";
import type { DashboardEnv } from "./env.ts";
import { BASE, CsrfField, MessagePage, Page, When } from "./layout.tsx";
import { ownerOnly } from "./owner_only.tsx";
import { type KeyRow, listTeamKeys, revokeTeamKey } from "./queries.ts";
import type { SessionUser } from "./sessions.ts";
import { field } from "./form.ts";

/** The kinds of key, as the create form offers them. */
const KINDS: Record<KeyKind, string> = {
  sk_live: "Live secret (sends for real)",
  sk_test: "Test secret (sandbox: outbox only, never charged)",
  pk_live: "Publishable (client-side: OTP and contact tokens)",
  pk_test: "Publishable test",
};

function isKind(value: string): value is KeyKind {
  return Object.hasOwn(KINDS, value);
}

function KeyTable(props: { keys: KeyRow[]; user: SessionUser }) {
  const owner = props.user.role === "owner";
  return (
    <Table
      headings={["Prefix", "Kind", "Created", "Last used"]}
      caption={`API keys of ${props.user.teamName}`}
      actions={owner}
    >
      {props.keys.map((k) => (
        <tr key={k.prefix}>
          <td data-label="Prefix">
            <code>{k.prefix}…</code>
          </td>
          <td data-label="Kind">{k.kind}</td>
          <td data-label="Created">
            <When at={k.created_at} />
          </td>
          <td data-label="Last used">
            <When at={k.last_used_at} />
          </td>
          {owner && (
            <td>
              <form method="post" action={`${BASE}/keys/${encodeURIComponent(k.prefix)}/revoke`}>
                <CsrfField user={props.user} />
                <button type="submit" class="danger" aria-label={`Revoke ${k.prefix}`}>Revoke</button>
              </form>
            </td>
          )}
        </tr>
      ))}
    </Table>
  );
}

function CreateKeyForm(props: { user: SessionUser }) {
  return (
    <section class="card" aria-labelledby="create-title">
      <h2 id="create-title">Create a key</h2>
      <form method="post" action={`${BASE}/keys`} class="row">
        <CsrfField user={props.user} />
        <div class="field">
          <label for="kind">Kind</label>
          <select id="kind" name="kind">
            {Object.entries(KINDS).map(([kind, label]) => <option key={kind} value={kind}>{label}</option>)}
          </select>
        </div>
        <button type="submit">Create key</button>
      </form>
    </section>
  );
}

function KeysPage(props: { user: SessionUser; keys: KeyRow[]; created?: string }) {
  const { user, keys } = props;
  const owner = user.role === "owner";
  return (
    <Page title="API keys" user={user} active="keys">
      <h1>API keys</h1>
      {props.created && (
        <section class="card notice" aria-labelledby="new-key-title" role="status">
          <h2 id="new-key-title">Your new key</h2>
          <p>Copy it now: it is shown only this once, and only its prefix is kept.</p>
          <code class="secret" id="new-key">{props.created}</code>
        </section>
      )}
      <section class="card" aria-labelledby="list-title">
        <h2 id="list-title">Keys in use</h2>
        {keys.length > 0 ? <KeyTable keys={keys} user={user} /> : (
          <div class="empty">
            <p>
              <strong>No API keys yet.</strong>
            </p>
            <p>
              {owner
                ? "Create a key below, then send it as the X-API-Key header of your first API request."
                : "Ask an owner of your team to create one: members can see keys but not create them."}
            </p>
          </div>
        )}
      </section>
      {owner && <CreateKeyForm user={user} />}
    </Page>
  );
}

/** The API-keys page: everyone in the team sees the keys; owners create (shown once) and revoke. */
export function keysRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  app.get("/keys", async (c) => {
    const user = c.get("user");
    return c.html(<KeysPage user={user} keys={await listTeamKeys(deps.sql, user.teamId)} />);
  });

  app.post("/keys", ownerOnly("create API keys"), async (c) => {
    const user = c.get("user");
    const kind = field(await c.req.parseBody(), "kind");
    if (!isKind(kind)) {
      return c.html(<KeysPage user={user} keys={await listTeamKeys(deps.sql, user.teamId)} />, 400);
    }
    const key = await createApiKey(deps.sql, user.teamId, kind);
    return c.html(<KeysPage user={user} keys={await listTeamKeys(deps.sql, user.teamId)} created={key} />, 201);
  });

  app.post("/keys/:prefix/revoke", ownerOnly("revoke API keys"), async (c) => {
    const user = c.get("user");
    // Another team's prefix revokes nothing, exactly like an unknown one.
    if (!await revokeTeamKey(deps.sql, user.teamId, c.req.param("prefix") ?? "")) {
      const message = "No key of this team has that prefix: it may have been revoked already.";
      return c.html(<MessagePage title="Key not found" message={message} user={user} />, 404);
    }
    // Cached look-ups would keep accepting the key for a while.
    deps.keys.clear();
    return c.redirect(`${BASE}/keys`, 303);
  });

  return app;
}
