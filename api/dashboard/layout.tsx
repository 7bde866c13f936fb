import type { Child } from "hono/jsx";
import { raw } from "hono/html";
import { CSS_PATH } from "./assets.ts";
import { CSRF_FIELD } from "./csrf.ts";
import type { SessionUser } from "./sessions.ts";

/** Where the dashboard is mounted; every link and form starts with it. */
export const BASE = "/dashboard";

/** The sections of the nav; `owner` ones are not shown to members (who could not open them). */
const SECTIONS = [
  { id: "templates", label: "Templates", path: "/templates", owner: false },
  { id: "workflows", label: "Workflows", path: "/workflows", owner: false },
  { id: "contacts", label: "Contacts", path: "/contacts", owner: false },
  { id: "messages", label: "Messages", path: "/messages", owner: false },
  { id: "sends", label: "Sends", path: "/sends", owner: false },
  { id: "senders", label: "Senders", path: "/senders", owner: false },
  { id: "webhooks", label: "Webhooks", path: "/webhooks", owner: false },
  { id: "wallet", label: "Wallet", path: "/wallet", owner: false },
  { id: "keys", label: "API keys", path: "/keys", owner: false },
  { id: "channel-accounts", label: "Channel accounts", path: "/channel-accounts", owner: true },
  { id: "team", label: "Team", path: "/team", owner: true },
] as const;

/** A section of the nav, as a page names itself to be shown as the current one. */
export type Section = (typeof SECTIONS)[number]["id"];

/** The hidden field with the session's forgery token: every form that changes state carries it. */
export function CsrfField(props: { user: SessionUser }) {
  return <input type="hidden" name={CSRF_FIELD} value={props.user.csrf} />;
}

function Header(props: { user: SessionUser }) {
  const { user } = props;
  return (
    <header class="top">
      <span class="team">{user.teamName}</span>
      <div class="who">
        <span>
          <a href={`${BASE}/account`}>{user.email}</a> <span>({user.role})</span>
        </span>
        <form method="post" action={`${BASE}/sign-out`}>
          <CsrfField user={user} />
          <button type="submit" class="quiet">Sign out</button>
        </form>
        <form method="post" action={`${BASE}/sign-out-everywhere`}>
          <CsrfField user={user} />
          <button type="submit" class="quiet">Sign out everywhere</button>
        </form>
      </div>
    </header>
  );
}

function Nav(props: { user: SessionUser; active?: Section }) {
  const sections = SECTIONS.filter((s) => !s.owner || props.user.role === "owner");
  return (
    <nav class="sections" aria-label="Sections">
      <ul>
        {sections.map((s) => (
          <li key={s.id}>
            <a href={`${BASE}${s.path}`} aria-current={s.id === props.active ? "page" : undefined}>{s.label}</a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/**
 * A whole page: the header and nav of a signed-in user (none signed out), then the content; `scripts`
 * are paths under /dashboard of served files (the CSP allows no other script); `refresh` reloads the
 * page after that many seconds (a progress page that needs no script).
 */
export function Page(
  props: {
    title: string;
    user?: SessionUser;
    active?: Section;
    scripts?: string[];
    refresh?: number;
    children?: Child;
  },
) {
  return (
    <>
      {raw("<!DOCTYPE html>")}
      <html lang="en">
        <head>
          <meta charset="utf-8" />
          <meta name="viewport" content="width=device-width, initial-scale=1" />
          {props.refresh && <meta http-equiv="refresh" content={String(props.refresh)} />}
          <title>{props.title} · Messaging dashboard</title>
          <link rel="stylesheet" href={`${BASE}${CSS_PATH}`} />
          {props.scripts?.map((path) => <script key={path} src={`${BASE}${path}`} defer></script>)}
        </head>
        <body>
          <a class="skip" href="#main">Skip to content</a>
          {props.user && <Header user={props.user} />}
          {props.user && <Nav user={props.user} active={props.active} />}
          <main id="main">{props.children}</main>
        </body>
      </html>
    </>
  );
}

/** A page that only says something: an error (403, 404, 429) or a notice, with a way on. */
export function MessagePage(props: { title: string; message: string; user?: SessionUser }) {
  return (
    <Page title={props.title} user={props.user}>
      <section class="card narrow alert" aria-labelledby="message-title">
        <h1 id="message-title">{props.title}</h1>
        <p>{props.message}</p>
        <p>
          <a href={props.user ? `${BASE}/keys` : `${BASE}/sign-in`}>
            {props.user ? "Back to the dashboard" : "Go to sign-in"}
          </a>
        </p>
      </section>
    </Page>
  );
}

/** A date as the dashboard shows it: UTC to the minute, in a <time> element readers can parse. */
export function When(props: { at: Date | null; never?: string }) {
  if (!props.at) return <span class="muted">{props.never ?? "Never"}</span>;
  const iso = props.at.toISOString();
  return <time datetime={iso}>{iso.slice(0, 16).replace("T", " ")} UTC</time>;
}
