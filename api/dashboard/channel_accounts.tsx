import type { Context } from "hono";
import { Hono } from "hono";
import { AccountBody, type AccountInput, saveChannelAccounts } from "../admin/channel_accounts.ts";
import {
  type ChannelAccount,
  type ChannelAccountList,
  channelAccountsKey,
  listChannelAccounts,
  loadChannelAccounts,
} from "../../shared/channel_accounts.ts";
import type { Deps } from "../../shared/deps.ts";
import { AppError } from "../../shared/errors.ts";
import { checkAccount, type CheckResult } from "../../shared/providers/check.ts";
import {
  type AccountProviderName,
  carries,
  PROVIDERS_BY_CHANNEL,
  SECRET_FIELDS,
} from "../../shared/providers/credentials.ts";
import type { Channel } from "../../shared/providers/types.ts";
import { Table } from "./table.tsx";
import type { DashboardEnv } from "./env.ts";
import { failoverOfForm, FailoverOnTimeout } from "./failover_on_timeout.tsx";
import { field } from "./form.ts";
import { BASE, CsrfField, MessagePage, Page, When } from "./layout.tsx";
import { ownerOnly } from "./owner_only.tsx";
import type { SessionUser } from "./sessions.ts";

const CHANNELS = Object.keys(PROVIDERS_BY_CHANNEL) as Channel[];
const CHANNEL_LABELS: Record<Channel, string> = { sms: "SMS", whatsapp: "WhatsApp", email: "Email", push: "Push" };
const PROVIDER_LABELS: Record<AccountProviderName, string> = {
  twilio: "Twilio",
  vonage: "Vonage",
  resend: "Resend",
  ses: "Amazon SES",
  smtp: "SMTP server",
  fcm: "Firebase Cloud Messaging",
  apns: "Apple Push Notification service",
};
/** The admin API's limit per channel (ChannelAccountsBody). */
const MAX_ACCOUNTS = 5;

/** A credential as the form asks for it; the schema that checks it is the admin API's (AccountBody). */
interface FieldSpec {
  name: string;
  label: string;
  kind?: "number" | "checkbox" | "textarea";
  optional?: boolean;
}

const FROM: FieldSpec = { name: "from", label: "Sender for this account (else the team's)", optional: true };
const FIELDS: Record<AccountProviderName, FieldSpec[]> = {
  twilio: [{ name: "account_sid", label: "Account SID" }, { name: "auth_token", label: "Auth token" }, FROM],
  vonage: [{ name: "api_key", label: "API key" }, { name: "api_secret", label: "API secret" }, FROM],
  resend: [{ name: "api_key", label: "API key (re_…)" }, FROM],
  ses: [
    { name: "region", label: "Region" },
    { name: "access_key_id", label: "Access key id" },
    { name: "secret_access_key", label: "Secret access key" },
    { name: "configuration_set", label: "Configuration set", optional: true },
    FROM,
  ],
  smtp: [
    { name: "host", label: "Host" },
    { name: "port", label: "Port", kind: "number" },
    { name: "secure", label: "TLS from the first byte (port 465)", kind: "checkbox" },
    { name: "username", label: "User name", optional: true },
    { name: "password", label: "Password", optional: true },
    FROM,
  ],
  fcm: [
    { name: "project_id", label: "Project id" },
    { name: "client_email", label: "Service account email" },
    { name: "private_key", label: "Private key (PEM)", kind: "textarea" },
    { name: "private_key_id", label: "Private key id", optional: true },
    { name: "token_uri", label: "Token URI", optional: true },
  ],
  apns: [
    { name: "team_id", label: "Team id" },
    { name: "key_id", label: "Key id" },
    { name: "private_key", label: "Private key (.p8 PEM)", kind: "textarea" },
    { name: "bundle_id", label: "Bundle id" },
  ],
};

function isChannel(value: string | undefined): value is Channel {
  return value !== undefined && Object.hasOwn(PROVIDERS_BY_CHANNEL, value);
}

function isSecret(provider: AccountProviderName, name: string): boolean {
  return SECRET_FIELDS[provider].includes(name);
}

/** A masked credential as the page shows it (the same text GET /admin/v1/…/channel-accounts answers). */
function shown(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

type Account = ChannelAccountList["accounts"][number];

function AccountRow(
  props: { user: SessionUser; channel: Channel; account: Account; index: number; count: number; manage: boolean },
) {
  const { user, channel, account: a, index, count, manage } = props;
  const action = (what: string) => `${BASE}/channel-accounts/${channel}/${a.id}/${what}`;
  const name = `${PROVIDER_LABELS[a.provider]} (${index + 1})`;
  return (
    <tr>
      <td data-label="Order">{index + 1}</td>
      <td data-label="Provider">{PROVIDER_LABELS[a.provider]}</td>
      <td data-label="Credentials">
        <dl class="facts">
          {Object.entries(a.credentials).map(([k, v]) => (
            <>
              <dt>{k}</dt>
              <dd>
                <code>{shown(v)}</code>
              </dd>
            </>
          ))}
        </dl>
      </td>
      <td data-label="Base URL">{a.base_url ?? <span class="muted">default</span>}</td>
      <td data-label="Saved">
        <When at={new Date(a.updated_at)} />
      </td>
      {manage && (
        <td class="actions">
          <form method="post" action={action("check")}>
            <CsrfField user={user} />
            <button type="submit" aria-label={`Check ${name}`}>Check</button>
          </form>
          <a href={action("edit")} aria-label={`Edit ${name}`}>Edit</a>
          {index > 0 && (
            <form method="post" action={action("move")}>
              <CsrfField user={user} />
              <input type="hidden" name="direction" value="up" />
              <button type="submit" class="quiet" aria-label={`Move ${name} up`}>Up</button>
            </form>
          )}
          {index < count - 1 && (
            <form method="post" action={action("move")}>
              <CsrfField user={user} />
              <input type="hidden" name="direction" value="down" />
              <button type="submit" class="quiet" aria-label={`Move ${name} down`}>Down</button>
            </form>
          )}
          <form method="post" action={action("remove")}>
            <CsrfField user={user} />
            <button type="submit" class="danger" aria-label={`Remove ${name}`}>Remove</button>
          </form>
        </td>
      )}
    </tr>
  );
}

function ChannelSection(props: { user: SessionUser; list: ChannelAccountList; manage: boolean }) {
  const { user, list, manage } = props;
  const channel = list.channel;
  const id = `channel-${channel}`;
  return (
    <section class="card" id={channel} aria-labelledby={id}>
      <h2 id={id}>{CHANNEL_LABELS[channel]}</h2>
      {list.accounts.length === 0
        ? <p class="empty">No accounts of your own: {CHANNEL_LABELS[channel]} goes through the service's provider.</p>
        : (
          <Table
            headings={["Order", "Provider", "Credentials", "Base URL", "Saved"]}
            caption={`${CHANNEL_LABELS[channel]} accounts, in the order they are tried`}
            actions={manage}
          >
            {list.accounts.map((a, i) => (
              <AccountRow
                key={a.id}
                user={user}
                channel={channel}
                account={a}
                index={i}
                count={list.accounts.length}
                manage={manage}
              />
            ))}
          </Table>
        )}
      {list.accounts.length > 0 && (
        <FailoverOnTimeout
          user={user}
          channel={channel}
          channelLabel={CHANNEL_LABELS[channel]}
          allowed={list.failover_on_timeout}
          manage={manage}
        />
      )}
      {manage && list.accounts.length < MAX_ACCOUNTS && (
        <form method="get" action={`${BASE}/channel-accounts/${channel}/new`} class="row">
          <div class="field">
            <label for={`${channel}-provider`}>Provider</label>
            <select id={`${channel}-provider`} name="provider">
              {PROVIDERS_BY_CHANNEL[channel].map((p) => <option key={p} value={p}>{PROVIDER_LABELS[p]}</option>)}
            </select>
          </div>
          <button type="submit">Add an account</button>
        </form>
      )}
    </section>
  );
}

/** The outcome of a "Check", shown above the lists. */
interface Checked {
  name: string;
  result: CheckResult;
}

function ChannelAccountsPage(
  props: { user: SessionUser; lists: ChannelAccountList[]; keySet: boolean; checked?: Checked },
) {
  const { user, lists, keySet, checked } = props;
  return (
    <Page title="Channel accounts" user={user} active="channel-accounts">
      <h1>Channel accounts</h1>
      <p class="muted">
        Your team's own provider accounts. A message goes to the first account of its channel, then the next when the
        first certainly did not take it, and last to the service's provider. Secrets are encrypted and never shown
        again: only their last characters.
      </p>
      {checked && (
        <section
          class={`card ${checked.result.ok ? "notice" : "alert"}`}
          role="status"
          aria-labelledby="check-title"
          id="check-result"
        >
          <h2 id="check-title">
            {checked.name}:{" "}
            {checked.result.checkable ? (checked.result.ok ? "works" : "does not work") : "not checkable"}
          </h2>
          <p>{checked.result.message}</p>
        </section>
      )}
      {!keySet && (
        <section class="card alert" aria-labelledby="no-key-title">
          <h2 id="no-key-title">Accounts cannot be changed here yet</h2>
          <p>
            The service keeps channel credentials only encrypted, and its operator has not set the key to do so
            (CHANNEL_ACCOUNTS_KEY: base64 of 32 random bytes, e.g.{" "}
            <code>openssl rand -base64 32</code>). Until then every message goes through the service's own providers.
          </p>
        </section>
      )}
      {lists.map((list) => <ChannelSection key={list.channel} user={user} list={list} manage={keySet} />)}
    </Page>
  );
}

function CredentialField(props: { provider: AccountProviderName; spec: FieldSpec; value?: unknown; editing: boolean }) {
  const { provider, spec, value, editing } = props;
  const id = `cred-${spec.name}`;
  const secret = isSecret(provider, spec.name);
  if (spec.kind === "checkbox") {
    return (
      <div class="field">
        <label>
          <input type="checkbox" name={spec.name} checked={value === true} /> {spec.label}
        </label>
      </div>
    );
  }
  // A secret is never put back into the page: left empty on an edit, the stored one stays.
  const shownValue = secret ? "" : value === undefined ? "" : String(value);
  const placeholder = secret && editing ? "Leave empty to keep the current one" : undefined;
  const required = !spec.optional && !(secret && editing);
  const label = `${spec.label}${spec.optional ? " (optional)" : ""}`;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {spec.kind === "textarea"
        ? (
          <textarea id={id} name={spec.name} rows={5} required={required} placeholder={placeholder}>
            {shownValue}
          </textarea>
        )
        : (
          <input
            id={id}
            name={spec.name}
            type={secret ? "password" : spec.kind === "number" ? "number" : "text"}
            autocomplete="off"
            value={spec.kind === "number" && value === undefined ? "587" : shownValue}
            required={required}
            placeholder={placeholder}
          />
        )}
    </div>
  );
}

function AccountFormPage(
  props: {
    user: SessionUser;
    channel: Channel;
    provider: AccountProviderName;
    /** The account edited (masked), or none for a new one. */
    account?: Account;
    error?: string;
  },
) {
  const { user, channel, provider, account, error } = props;
  const editing = account !== undefined;
  const title = editing
    ? `Edit the ${PROVIDER_LABELS[provider]} account`
    : `Add a ${PROVIDER_LABELS[provider]} account for ${CHANNEL_LABELS[channel]}`;
  const action = editing ? `${BASE}/channel-accounts/${channel}/${account.id}` : `${BASE}/channel-accounts/${channel}`;
  return (
    <Page title={title} user={user} active="channel-accounts">
      <p>
        <a href={`${BASE}/channel-accounts#${channel}`}>Channel accounts</a>
      </p>
      <section class="card" aria-labelledby="account-title">
        <h1 id="account-title">{title}</h1>
        {error && <p class="card alert" role="alert" id="account-error">{error}</p>}
        <form method="post" action={action}>
          <CsrfField user={user} />
          <input type="hidden" name="provider" value={provider} />
          {FIELDS[provider].map((spec) => (
            <CredentialField
              key={spec.name}
              provider={provider}
              spec={spec}
              value={account?.credentials[spec.name]}
              editing={editing}
            />
          ))}
          {provider !== "smtp" && (
            <div class="field">
              <label for="base_url">API base URL (optional: a regional endpoint)</label>
              <input id="base_url" name="base_url" type="url" autocomplete="off" value={account?.base_url ?? ""} />
            </div>
          )}
          <button type="submit">{editing ? "Save" : "Add account"}</button>
        </form>
      </section>
    </Page>
  );
}

/** The account a form describes, in the admin API's shape; an empty secret of `current` keeps its value. */
function accountOfForm(provider: AccountProviderName, form: Record<string, unknown>, current?: ChannelAccount) {
  const credentials: Record<string, unknown> = {};
  for (const spec of FIELDS[provider]) {
    const text = field(form, spec.name).trim();
    if (spec.kind === "checkbox") {
      if (text) credentials[spec.name] = true;
      continue;
    }
    if (!text) {
      if (current && isSecret(provider, spec.name) && current.credentials[spec.name] !== undefined) {
        credentials[spec.name] = current.credentials[spec.name];
      }
      continue;
    }
    credentials[spec.name] = spec.kind === "number" ? Number(text) : text;
  }
  const baseUrl = field(form, "base_url").trim();
  return { provider, credentials, ...(baseUrl && provider !== "smtp" ? { base_url: baseUrl } : {}) };
}

/** The form's account checked by the admin API's schema: the account, or what is wrong (no values). */
function parseAccount(value: unknown): { account: AccountInput } | { error: string } {
  const parsed = AccountBody.safeParse(value);
  if (parsed.success) return { account: parsed.data };
  const problems = parsed.error.issues.map((issue) => {
    const path = issue.path.join(".");
    return issue.message.startsWith(path) ? issue.message : `${path}: ${issue.message}`;
  });
  return { error: `Not saved: ${problems.join("; ")}.` };
}

function asInput(account: ChannelAccount): AccountInput {
  // Validated when it was saved: stored credentials are the schema's already.
  return {
    provider: account.provider,
    credentials: account.credentials,
    ...(account.baseUrl ? { base_url: account.baseUrl } : {}),
  } as AccountInput;
}

/**
 * The channel accounts page (owners only): list masked, add, edit, remove, reorder and check, and allow
 * or forbid failover after a timeout.
 */
export function channelAccountsRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();
  app.use("/channel-accounts", ownerOnly("manage the team's channel accounts"));
  app.use("/channel-accounts/*", ownerOnly("manage the team's channel accounts"));

  const notFound = (c: Context<DashboardEnv>) => {
    const message = "Your team has no such channel account: it may have been removed or changed meanwhile.";
    return c.html(<MessagePage title="Account not found" message={message} user={c.get("user")} />, 404);
  };

  /** The team's accounts of a channel, opened (needs CHANNEL_ACCOUNTS_KEY: MissingKeyError without). */
  async function opened(teamId: string, channel: Channel) {
    const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
    return await loadChannelAccounts(deps.sql, key, teamId, channel);
  }

  async function render(c: Context<DashboardEnv>, checked?: Checked, status: 200 | 400 = 200) {
    const user = c.get("user");
    const lists = await Promise.all(CHANNELS.map((ch) => listChannelAccounts(deps.sql, user.teamId, ch)));
    const keySet = Boolean(deps.config.CHANNEL_ACCOUNTS_KEY);
    return c.html(<ChannelAccountsPage user={user} lists={lists} keySet={keySet} checked={checked} />, status);
  }

  /** Saves the channel's accounts through the admin API's code; an invalid one re-shows its form. */
  async function save(
    c: Context<DashboardEnv>,
    channel: Channel,
    accounts: AccountInput[],
    failoverOnTimeout: boolean,
    form?: { provider: AccountProviderName; account?: Account },
  ) {
    const user = c.get("user");
    try {
      await saveChannelAccounts(deps, user.teamId, channel, accounts, failoverOnTimeout);
    } catch (error) {
      if (!form || !(error instanceof AppError) || error.status !== 400) throw error;
      const message = `Not saved: ${error.message.replace(/^accounts\.\d+\./, "")}.`;
      return c.html(<AccountFormPage user={user} channel={channel} {...form} error={message} />, 400);
    }
    return c.redirect(`${BASE}/channel-accounts#${channel}`, 303);
  }

  app.get("/channel-accounts", (c) => render(c));

  app.get("/channel-accounts/:channel/new", (c) => {
    const channel = c.req.param("channel");
    const provider = c.req.query("provider") ?? "";
    if (!isChannel(channel) || !carries(channel, provider)) return notFound(c);
    return c.html(<AccountFormPage user={c.get("user")} channel={channel} provider={provider} />);
  });

  app.post("/channel-accounts/:channel", async (c) => {
    const user = c.get("user");
    const channel = c.req.param("channel");
    const form = await c.req.parseBody();
    const provider = field(form, "provider");
    if (!isChannel(channel) || !carries(channel, provider)) return notFound(c);
    const current = await opened(user.teamId, channel);
    if (current.accounts.length >= MAX_ACCOUNTS) {
      const error = `Not saved: a channel has at most ${MAX_ACCOUNTS} accounts. Remove one first.`;
      return c.html(<AccountFormPage user={user} channel={channel} provider={provider} error={error} />, 400);
    }
    const parsed = parseAccount(accountOfForm(provider, form));
    if ("error" in parsed) {
      return c.html(<AccountFormPage user={user} channel={channel} provider={provider} error={parsed.error} />, 400);
    }
    const accounts = [...current.accounts.map(asInput), parsed.account];
    return await save(c, channel, accounts, current.failoverOnTimeout, { provider });
  });

  app.get("/channel-accounts/:channel/:id/edit", async (c) => {
    const user = c.get("user");
    const channel = c.req.param("channel");
    if (!isChannel(channel)) return notFound(c);
    const list = await listChannelAccounts(deps.sql, user.teamId, channel);
    const account = list.accounts.find((a) => a.id === c.req.param("id"));
    if (!account) return notFound(c);
    return c.html(<AccountFormPage user={user} channel={channel} provider={account.provider} account={account} />);
  });

  /**
   * The channel and the team's opened accounts of it, with the index of the one the path names;
   * undefined (a 404) for another team's account, an unknown one or an unknown channel.
   */
  async function target(c: Context<DashboardEnv>) {
    const channel = c.req.param("channel");
    if (!isChannel(channel)) return undefined;
    const current = await opened(c.get("user").teamId, channel);
    const index = current.accounts.findIndex((a) => a.id === c.req.param("id"));
    return index < 0 ? undefined : { channel, current, index };
  }

  // Registered before ":channel/:id", whose path this one also matches.
  app.post("/channel-accounts/:channel/failover-on-timeout", async (c) => {
    const channel = c.req.param("channel");
    if (!isChannel(channel)) return notFound(c);
    const allowed = failoverOfForm(await c.req.parseBody());
    if (allowed === undefined) {
      const message = "Not saved: the form did not say whether to allow failover after a timeout.";
      return c.html(<MessagePage title="Not saved" message={message} user={c.get("user")} />, 400);
    }
    const current = await opened(c.get("user").teamId, channel);
    return await save(c, channel, current.accounts.map(asInput), allowed);
  });

  app.post("/channel-accounts/:channel/:id", async (c) => {
    const user = c.get("user");
    const found = await target(c);
    if (!found) return notFound(c);
    const { channel, current, index } = found;
    const edited = current.accounts[index];
    const masked = (await listChannelAccounts(deps.sql, user.teamId, channel)).accounts[index];
    const formTarget = { provider: edited.provider, account: masked };
    const parsed = parseAccount(accountOfForm(edited.provider, await c.req.parseBody(), edited));
    if ("error" in parsed) {
      return c.html(<AccountFormPage user={user} channel={channel} {...formTarget} error={parsed.error} />, 400);
    }
    const accounts = current.accounts.map((a, i) => i === index ? parsed.account : asInput(a));
    return await save(c, channel, accounts, current.failoverOnTimeout, formTarget);
  });

  app.post("/channel-accounts/:channel/:id/remove", async (c) => {
    const found = await target(c);
    if (!found) return notFound(c);
    const { channel, current, index } = found;
    const accounts = current.accounts.filter((_, i) => i !== index).map(asInput);
    return await save(c, channel, accounts, current.failoverOnTimeout);
  });

  app.post("/channel-accounts/:channel/:id/move", async (c) => {
    const found = await target(c);
    if (!found) return notFound(c);
    const { channel, current, index } = found;
    const to = index + (field(await c.req.parseBody(), "direction") === "up" ? -1 : 1);
    const accounts = current.accounts.map(asInput);
    if (to >= 0 && to < accounts.length) [accounts[index], accounts[to]] = [accounts[to], accounts[index]];
    return await save(c, channel, accounts, current.failoverOnTimeout);
  });

  app.post("/channel-accounts/:channel/:id/check", async (c) => {
    const found = await target(c);
    if (!found) return notFound(c);
    const { channel, current, index } = found;
    const account = current.accounts[index];
    const result = await checkAccount(account);
    const name = `${CHANNEL_LABELS[channel]} account ${index + 1} (${PROVIDER_LABELS[account.provider]})`;
    return await render(c, { name, result });
  });

  return app;
}
