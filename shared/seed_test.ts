import assert from "node:assert/strict";
import { createService } from "../main.ts";
import { findIdentity, isVerifiedSender } from "./identities.ts";
import { startRuntime } from "./runtime.ts";
import {
  createDemoTeam,
  ensureAdminToken,
  ensureDemoChannelAccountsKey,
  seedDemo,
  senderDomain,
  tourExports,
} from "./seed.ts";
import { isBase64Key } from "./config.ts";
import { findTemplatesByKey, render } from "./templates.ts";
import { verifyPassword } from "./passwords.ts";
import { dbTest, testConfig, testDeps, testTeam } from "./testing.ts";
import { balanceMicros } from "./wallet.ts";

function capture() {
  const lines: string[] = [];
  return { lines, print: (text: string) => void lines.push(text) };
}

Deno.test("ensureAdminToken() keeps a configured token and prints nothing", () => {
  const out = capture();
  const config = testConfig({ ADMIN_TOKEN: "configured-token-0123456789" });
  assert.equal(ensureAdminToken(config, out.print).ADMIN_TOKEN, "configured-token-0123456789");
  assert.deepEqual(out.lines, []);
});

Deno.test("ensureDemoChannelAccountsKey() generates a key for the demo only, and keeps a configured one", () => {
  const out = capture();
  const generated = ensureDemoChannelAccountsKey(
    testConfig({ CHANNEL_ACCOUNTS_KEY: undefined, DEMO_SEED: true }),
    out.print,
  );
  assert.equal(isBase64Key(generated.CHANNEL_ACCOUNTS_KEY ?? ""), true);
  assert.equal(JSON.parse(out.lines[0]).channel_accounts_key, generated.CHANNEL_ACCOUNTS_KEY);
  const production = testConfig({ CHANNEL_ACCOUNTS_KEY: undefined, DEMO_SEED: false });
  assert.equal(ensureDemoChannelAccountsKey(production, out.print).CHANNEL_ACCOUNTS_KEY, undefined);
  const set = testConfig({ DEMO_SEED: true });
  assert.equal(ensureDemoChannelAccountsKey(set, out.print).CHANNEL_ACCOUNTS_KEY, set.CHANNEL_ACCOUNTS_KEY);
  assert.equal(out.lines.length, 1);
});

Deno.test("ensureAdminToken() generates a random 32-character base62 token when unset and prints it", () => {
  const out = capture();
  const config = testConfig({ ADMIN_TOKEN: undefined });
  const first = ensureAdminToken(config, out.print).ADMIN_TOKEN ?? "";
  const second = ensureAdminToken(config, () => {}).ADMIN_TOKEN ?? "";
  assert.match(first, /^[0-9A-Za-z]{32}$/);
  assert.notEqual(first, second);
  assert.equal(out.lines.length, 1);
  const line = JSON.parse(out.lines[0]);
  assert.equal(line.level, "warn");
  assert.equal(line.admin_token, first);
});

Deno.test("senderDomain() reads the domain of a plain or a named address", () => {
  assert.equal(senderDomain("no-reply@Example.com"), "example.com");
  assert.equal(senderDomain("Acme <news@mail.acme.test>"), "mail.acme.test");
});

dbTest("createDemoTeam() makes a funded pro team with a welcome template per channel and working keys", async () => {
  const deps = await testDeps({ EMAIL_FROM: "hello@demo-seed.test" });
  const demo = await createDemoTeam(deps);
  assert.deepEqual([demo.team.name, demo.team.plan], ["Demo", "pro"]);
  assert.equal(await balanceMicros(deps.sql, demo.team.id), 100_000_000);
  assert.equal(await isVerifiedSender(deps.sql, demo.team.id, "hello@demo-seed.test"), true);
  assert.equal((await findIdentity(deps.sql, demo.team.id, "email"))?.from_address, "hello@demo-seed.test");

  const templates = await findTemplatesByKey(deps.sql, demo.team.id, "welcome");
  assert.deepEqual(templates.map((t) => [t.channel, t.status]), [
    ["email", "approved"],
    ["push", "approved"],
    ["sms", "approved"],
    ["whatsapp", "approved"],
  ]);
  const byChannel = Object.fromEntries(templates.map((t) => [t.channel, t]));
  const vars = { contact_first_name: "Ada", 1: "Ada" };
  assert.equal(render(byChannel.email.subject ?? "", vars).text, "Welcome, Ada!");
  assert.match(render(byChannel.email.html ?? "", vars).text, /Hi Ada/);
  assert.match(render(byChannel.email.text ?? "", vars).text, /Hi Ada/);
  assert.match(render(byChannel.sms.body ?? "", vars).text, /Hi Ada/);
  assert.equal(byChannel.whatsapp.category, "UTILITY");
  assert.match(render(byChannel.whatsapp.body ?? "", { 1: "Ada" }).text, /Hi Ada/);
  assert.ok(byChannel.push.title && byChannel.push.body);

  const app = createService(deps);
  for (const key of [demo.keys.live, demo.keys.test]) {
    const res = await app.request("/api/v1/contacts", { headers: { "X-API-Key": key } });
    assert.notEqual(res.status, 401);
  }
});

Deno.test("tourExports() is a shell line that sets the tour's variables, whatever the admin token holds", async () => {
  const demo = {
    team: { id: crypto.randomUUID(), name: "Demo", plan: "pro" as const },
    keys: { live: "sk_live_abc", test: "sk_test_def", publishable: "pk_live_ghi" },
  };
  const token = `it's a "token" with $HOME and spaces`;
  const line = tourExports(demo, testConfig({ PORT: 8123, ADMIN_TOKEN: token }));
  const script = `${line}\nprintf '%s\\n' "$API" "$ADMIN_API" "$KEY" "$TEST_KEY" "$TEAM" "$ADMIN"`;
  const out = await new Deno.Command("bash", { args: ["-c", script], stdout: "piped" }).output();
  assert.ok(out.success);
  assert.deepEqual(new TextDecoder().decode(out.stdout).split("\n").slice(0, 6), [
    "http://localhost:8123/api/v1",
    "http://localhost:8123/admin/v1",
    "sk_live_abc",
    "sk_test_def",
    demo.team.id,
    token,
  ]);
});

dbTest("seedDemo() creates and prints nothing when teams exist or DEMO_SEED is off", async () => {
  const deps = await testDeps({ DEMO_SEED: true });
  await testTeam(deps);
  const out = capture();
  assert.equal(await seedDemo(deps, out), undefined);
  assert.equal(await seedDemo({ ...deps, config: { ...deps.config, DEMO_SEED: false } }, out), undefined);
  assert.deepEqual(out.lines, []);
});

dbTest("seedDemo() on an empty database seeds once and prints the keys and admin token once", async () => {
  const config = testConfig({ DEMO_SEED: true, ADMIN_TOKEN: "seed-admin-token-0123456789" });
  const schema = config.DATABASE_URL ? `test_seed_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}` : undefined;
  const runtime = await startRuntime(config, { schema });
  try {
    const out = capture();
    const demo = await seedDemo(runtime.deps, out);
    assert.ok(demo);
    assert.equal(out.lines.length, 1);
    const notice = JSON.parse(out.lines[0]);
    assert.deepEqual(notice.keys, demo.keys);
    assert.equal(notice.admin_token, "seed-admin-token-0123456789");
    assert.equal(notice.team.id, demo.team.id);
    // The demo owner's sign-in for the dashboard.
    assert.deepEqual(notice.dashboard, {
      url: `http://localhost:${runtime.deps.config.PORT}/dashboard`,
      email: demo.owner.email,
      password: demo.owner.password,
    });
    const [owner] = await runtime.deps
      .sql`select role, password_hash from dashboard_users where email = ${demo.owner.email}`;
    assert.equal(owner.role, "owner");
    assert.ok(await verifyPassword(demo.owner.password, owner.password_hash));
    // A second start: nothing printed, nothing created.
    assert.equal(await seedDemo(runtime.deps, out), undefined);
    assert.equal(out.lines.length, 1);
    const [{ count }] = await runtime.deps.sql`select count(*)::int as count from teams`;
    assert.equal(count, 1);
  } finally {
    if (schema) await runtime.deps.sql`drop schema ${runtime.deps.sql(schema)} cascade`;
    await runtime.close();
  }
});

dbTest("seedDemo() called at once by two starts on one empty database makes one demo team", async () => {
  const config = testConfig({ DEMO_SEED: true, ADMIN_TOKEN: "seed-admin-token-0123456789" });
  const schema = config.DATABASE_URL ? `test_seed_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}` : undefined;
  // On a server: two processes' worth of connection pools on one schema. On PGlite the database
  // belongs to one process: two starts there are two calls in it.
  const first = await startRuntime(config, { schema });
  const second = schema ? await startRuntime(config, { schema }) : first;
  try {
    const out = capture();
    const seeded = await Promise.all([seedDemo(first.deps, out), seedDemo(second.deps, out)]);
    assert.equal(seeded.filter((demo) => demo !== undefined).length, 1);
    assert.equal(out.lines.length, 1);
    const [{ count }] = await first.deps.sql`select count(*)::int as count from teams`;
    assert.equal(count, 1);
  } finally {
    if (schema) await first.deps.sql`drop schema ${first.deps.sql(schema)} cascade`;
    if (second !== first) await second.close();
    await first.close();
  }
});
