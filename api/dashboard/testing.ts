import { createService } from "../../main.ts";
import type { Config } from "../../shared/config.ts";
import { createDashboardUser, type DashboardRole } from "../../shared/dashboard_users.ts";
import type { Deps } from "../../shared/deps.ts";
import { randomEmail, testDeps, testTeam } from "../../shared/testing.ts";
import { CSRF_FIELD } from "./csrf.ts";

/** What a test sees of a dashboard answer. */
export interface Seen {
  status: number;
  html: string;
  headers: Headers;
}

/** A random IPv4 address in 10.0.0.0/8. */
export function randomIp(): string {
  const [a, b, c] = crypto.getRandomValues(new Uint8Array(3));
  return `10.${a}.${b}.${c}`;
}

/** The outbox messages of a trigger once the worker has recorded them (waits up to the test's own timeout). */
export async function waitForOutbox(deps: Deps, triggerId: string): Promise<{ to_address: string; body: string }[]> {
  while (true) {
    const rows = await deps.sql<{ to_address: string; body: string }[]>`
      select to_address, body from outbox_all where trigger_id = ${triggerId}`;
    if (rows.length > 0) return [...rows];
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A password good enough for the admin API's rules. */
export const PASSWORD = "a long test password 42";

/** A new user of a team, with the password to sign in. */
export async function testUser(deps: Deps, teamId: string, role: DashboardRole = "owner") {
  const email = randomEmail(role);
  const user = await createDashboardUser(deps.sql, { teamId, email, password: PASSWORD, role });
  return { ...user, password: PASSWORD };
}

/**
 * A browser stand-in over `app.request()`: keeps the session cookie, posts forms from the service's
 * own origin with the forgery token of the last page it saw.
 */
export class Visitor {
  #app: ReturnType<typeof createService>;
  #headers: Record<string, string>;
  cookie: string | undefined;
  csrf: string | undefined;

  constructor(app: ReturnType<typeof createService>, headers: Record<string, string> = {}) {
    this.#app = app;
    // An address of its own, so that the sign-in limit per IP of one test never meets another's.
    this.#headers = { "X-Forwarded-For": randomIp(), ...headers };
  }

  async #send(path: string, init: RequestInit): Promise<Seen> {
    const headers = new Headers({ ...this.#headers, ...init.headers as Record<string, string> });
    if (this.cookie) headers.set("Cookie", this.cookie);
    const res = await this.#app.request(path, { ...init, headers });
    const set = res.headers.get("set-cookie");
    if (set) this.cookie = /max-age=0/i.test(set) ? undefined : set.split(";")[0];
    const html = await res.text();
    this.csrf = new RegExp(`name="${CSRF_FIELD}" value="([^"]+)"`).exec(html)?.[1] ?? this.csrf;
    return { status: res.status, html, headers: res.headers };
  }

  /** GETs a dashboard page. */
  get(path: string): Promise<Seen> {
    return this.#send(path, {});
  }

  /** POSTs a form as the dashboard's own page would; `headers` override the defaults (Origin …). */
  post(path: string, fields: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<Seen> {
    const body = new URLSearchParams(this.csrf ? { [CSRF_FIELD]: this.csrf, ...fields } : fields);
    return this.#send(path, {
      method: "POST",
      body,
      headers: {
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: "http://localhost",
        "Sec-Fetch-Site": "same-origin",
        ...headers,
      },
    });
  }

  /** Signs in through the form, then opens the keys page (so the forgery token is known). */
  async signIn(email: string, password: string = PASSWORD): Promise<Seen> {
    const res = await this.post("/dashboard/sign-in", { email, password });
    if (res.status !== 303) return res;
    return await this.get(res.headers.get("location")!);
  }
}

/** A service with a fresh team, its owner and a member, and a signed-out visitor. */
export async function dashboardFixture(overrides: Partial<Config> = {}, now?: () => number) {
  const base = await testDeps(overrides);
  const deps: Deps = now ? { ...base, now } : base;
  const app = createService(deps);
  const { team, keys } = await testTeam(deps);
  const [owner, member] = await Promise.all([testUser(deps, team.id, "owner"), testUser(deps, team.id, "member")]);
  return {
    deps,
    app,
    team,
    keys,
    owner,
    member,
    visitor: (headers?: Record<string, string>) => new Visitor(app, headers),
  };
}

/** A message row as a test wants it; what is left out gets a plain default. */
export interface TestMessage {
  channel?: string;
  status?: string;
  to_address?: string;
  contact_id?: string | null;
  trigger_id?: string;
  cost_micros?: number;
  created_at?: Date;
}

/**
 * Writes messages straight into the team's records (as the worker would), one second apart from
 * `start` in the order given, so that newest-first pages have a known order; their ids, oldest first.
 */
export async function insertMessages(
  deps: Deps,
  teamId: string,
  messages: TestMessage[],
  start = Date.now() - 86_400_000,
) {
  const trigger = crypto.randomUUID();
  const rows = messages.map((m, i) => ({
    id: `msg_${crypto.randomUUID().replaceAll("-", "")}`,
    execution_id: crypto.randomUUID(),
    recipient: m.to_address ?? `r${i}@example.com`,
    team_id: teamId,
    trigger_id: m.trigger_id ?? trigger,
    channel: m.channel ?? "email",
    status: m.status ?? "sent",
    to_address: m.to_address ?? `r${i}@example.com`,
    contact_id: m.contact_id ?? null,
    cost_micros: m.cost_micros ?? 1000,
    created_at: m.created_at ?? new Date(start + i * 1000),
  }));
  await deps.sql`insert into messages ${deps.sql(rows)}`;
  return rows.map((r) => r.id);
}

/** The "Next page" link of a keyset list, if any. */
export function nextLink(html: string): string | undefined {
  return /<a href="([^"]+)" rel="next">/.exec(html)?.[1]?.replaceAll("&amp;", "&");
}

/** A fixture whose owner (or member) is signed in as `v`. */
export async function signedInFixture(role: DashboardRole = "owner") {
  const f = await dashboardFixture();
  const v = f.visitor();
  await v.signIn(role === "owner" ? f.owner.email : f.member.email);
  return { ...f, v };
}

/** The ids (as `linksOf` reads them) a keyset list shows, following its next-page links to the end. */
export async function allPages(v: Visitor, path: string, linksOf: (html: string) => string[]) {
  const ids: string[] = [];
  let next: string | undefined = path;
  let pages = 0;
  while (next) {
    const page = await v.get(next);
    if (page.status !== 200) throw new Error(`${next} answered ${page.status}`);
    ids.push(...linksOf(page.html));
    next = nextLink(page.html);
    pages++;
  }
  return { ids, pages };
}
