import { randomBase62 } from "./api_keys.ts";
import type { Config } from "./config.ts";
import type { Db } from "./db.ts";
import { createDashboardUser, generatePassword } from "./dashboard_users.ts";
import type { Deps, Team } from "./deps.ts";
import { setDomainVerified } from "./identities.ts";
import { logLine } from "./log.ts";
import { toMicros } from "./money.ts";
import { generateSecretKey } from "./secret_box.ts";
import { createTeam, type TeamKeys } from "./teams.ts";
import { upsertTemplate } from "./templates.ts";
import { topUp } from "./wallet.ts";

/** Where the start-up notices go (stdout; tests capture them). */
export type Print = (text: string) => void;

/** The demo team's starting balance, in USD. */
export const DEMO_BALANCE_USD = 100;

/**
 * The configuration with an admin token: the configured one, or a random one (32 base62
 * characters) generated for this run and printed (a JSON line, like every line the service
 * writes), so the admin API is never open. A lost token costs a restart, never data: each start
 * without ADMIN_TOKEN prints a new one, and one set in ADMIN_TOKEN holds across restarts.
 */
export function ensureAdminToken(config: Config, print: Print = console.log): Config {
  if (config.ADMIN_TOKEN) return config;
  const token = randomBase62(32);
  print(logLine("warn", "admin token generated for this run: set ADMIN_TOKEN to keep one across restarts", {
    admin_token: token,
  }));
  return { ...config, ADMIN_TOKEN: token };
}

/**
 * The configuration with a CHANNEL_ACCOUNTS_KEY for the demo (DEMO_SEED on): a key generated for this
 * run and printed, like the admin token, so that channel accounts can be tried at once. Accounts
 * stored under it cannot be opened after a restart unless it is set. Without the demo, no key is made:
 * storing accounts then answers 503 until the operator sets one.
 */
export function ensureDemoChannelAccountsKey(config: Config, print: Print = console.log): Config {
  if (config.CHANNEL_ACCOUNTS_KEY || !config.DEMO_SEED) return config;
  const key = generateSecretKey();
  print(logLine("warn", "channel accounts key generated for this run: set CHANNEL_ACCOUNTS_KEY to keep one", {
    channel_accounts_key: key,
  }));
  return { ...config, CHANNEL_ACCOUNTS_KEY: key };
}

/** The domain of an email sender ('Name <a@example.com>' or 'a@example.com'). */
export function senderDomain(from: string): string {
  return (from.split("@").pop() ?? "").replace(/[>\s]/g, "").toLowerCase();
}

/**
 * Creates the demo team: plan pro, keys of each kind, default identities, a funded wallet, the
 * domain of EMAIL_FROM verified and a `welcome` template of each channel.
 */
export async function createDemoTeam(deps: Deps): Promise<{ team: Team; keys: TeamKeys }> {
  const { sql, config } = deps;
  const demo = await createTeam(sql, config, { name: "Demo", plan: "pro" });
  const id = demo.team.id;
  await topUp(sql, id, toMicros(DEMO_BALANCE_USD), "Demo credit");
  await setDomainVerified(sql, id, senderDomain(config.EMAIL_FROM), true);
  await upsertTemplate(sql, id, "email", "welcome", {
    subject: "Welcome, {{contact_first_name}}!",
    html: "<p>Hi {{contact_first_name}},</p><p>Welcome aboard. We are glad you are here.</p>",
    text: "Hi {{contact_first_name}}, welcome aboard. We are glad you are here.",
  });
  await upsertTemplate(sql, id, "sms", "welcome", { body: "Hi {{contact_first_name}}, welcome aboard!" });
  await upsertTemplate(sql, id, "whatsapp", "welcome", { body: "Hi {{1}}, welcome aboard!", category: "UTILITY" });
  await upsertTemplate(sql, id, "push", "welcome", {
    title: "Welcome!",
    body: "Hi {{contact_first_name}}, thanks for joining.",
  });
  return demo;
}

/** The demo team's dashboard owner. */
export const DEMO_OWNER_EMAIL = "demo@example.com";

/** Sign-in details of a dashboard user, as printed once. */
export interface Credentials {
  email: string;
  password: string;
}

/** Creates the demo team's dashboard owner with a random password (returned: it is printed once). */
export async function createDemoOwner(db: Db, teamId: string): Promise<Credentials> {
  const credentials = { email: DEMO_OWNER_EMAIL, password: generatePassword() };
  await createDashboardUser(db, { teamId, ...credentials, role: "owner" });
  return credentials;
}

/** True when no team exists yet (a first start). */
export async function databaseIsEmpty(db: Db): Promise<boolean> {
  const [row]: [{ found: boolean }] = await db`select exists (select 1 from teams) as found`;
  return !row.found;
}

/**
 * The notice printed once when the demo team is created: one JSON line (a log collector reads it
 * like the others). Keys missed here are replaced through the admin API (GET /admin/v1/teams, then
 * POST /admin/v1/teams/{team_id}/keys).
 */
export function demoNotice(demo: { team: Team; keys: TeamKeys; owner?: Credentials }, config: Config): string {
  return logLine("info", "demo team created: its keys are shown only this once", {
    team: demo.team,
    keys: demo.keys,
    wallet_usd: DEMO_BALANCE_USD,
    templates: "'welcome' for email, sms, whatsapp and push",
    admin_token: config.ADMIN_TOKEN ?? "(none: set ADMIN_TOKEN)",
    ...(demo.owner ? { dashboard: dashboardSignIn(demo.owner, config) } : {}),
    shell: tourExports(demo, config),
    lost_keys: "GET /admin/v1/teams, then POST /admin/v1/teams/{team_id}/keys",
  });
}

/** Where the dashboard is and how the demo owner signs in to it. */
function dashboardSignIn(owner: Credentials, config: Config) {
  return { url: `http://localhost:${config.PORT}/dashboard`, email: owner.email, password: owner.password };
}

/**
 * One `export` line that sets the variables the README's tour uses, so that its commands run as
 * written once the line is pasted (docs/tour_test.ts runs the tour from this very line).
 */
export function tourExports(demo: { team: Team; keys: TeamKeys }, config: Config): string {
  const base = `http://localhost:${config.PORT}`;
  const vars = {
    API: `${base}/api/v1`,
    ADMIN_API: `${base}/admin/v1`,
    KEY: demo.keys.live,
    TEST_KEY: demo.keys.test,
    TEAM: demo.team.id,
    ADMIN: config.ADMIN_TOKEN ?? "",
  };
  return `export ${Object.entries(vars).map(([name, value]) => `${name}=${shellWord(value)}`).join(" ")}`;
}

/** `value` as one shell word: as is when it is plain, else single-quoted (a configured token may hold anything). */
function shellWord(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/**
 * On a first start (no team yet) with DEMO_SEED on, creates the demo team and its dashboard owner
 * and prints their keys and password once; returns them. Any later start creates and prints nothing (undefined).
 */
export async function seedDemo(
  deps: Deps,
  options: { print?: Print } = {},
): Promise<{ team: Team; keys: TeamKeys; owner: Credentials } | undefined> {
  if (!deps.config.DEMO_SEED) return undefined;
  return await oneSeederAtATime(deps, async () => {
    if (!await databaseIsEmpty(deps.sql)) return undefined;
    const created = await createDemoTeam(deps);
    const demo = { ...created, owner: await createDemoOwner(deps.sql, created.team.id) };
    (options.print ?? console.log)(demoNotice(demo, deps.config));
    return demo;
  });
}

/** Advisory lock of the seed (the migrations hold 72640013). */
const SEED_LOCK = 72640014;
let seeding: Promise<unknown> = Promise.resolve();

/**
 * Runs `seed` alone. On a PostgreSQL server: under an advisory lock held on a connection of its own,
 * so that processes starting together on one empty database make one demo team, not one each. On the
 * embedded PGlite (one process's own database, whose pool is the one connection `seed` needs): after
 * any other seed of this process.
 */
async function oneSeederAtATime<T>(deps: Deps, seed: () => Promise<T>): Promise<T> {
  if (!deps.config.DATABASE_URL) {
    const run = seeding.then(seed);
    seeding = run.catch(() => {});
    return await run;
  }
  const lock = await deps.sql.reserve();
  try {
    await lock`select pg_advisory_lock(${SEED_LOCK})`;
    try {
      return await seed();
    } finally {
      await lock`select pg_advisory_unlock(${SEED_LOCK})`;
    }
  } finally {
    lock.release();
  }
}
