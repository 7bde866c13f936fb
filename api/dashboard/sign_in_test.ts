import assert from "node:assert/strict";
import { dbTest, randomEmail } from "../../shared/testing.ts";
import { dashboardFixture, PASSWORD, randomIp } from "./testing.ts";
import { ACCOUNT_FAILURES, IP_FAILURES } from "./throttle.ts";

dbTest("GET /dashboard sends a signed-out visitor to a sign-in page with email and password fields", async () => {
  const { visitor } = await dashboardFixture();
  const v = visitor();
  const res = await v.get("/dashboard");
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/dashboard/sign-in");
  const page = await v.get("/dashboard/sign-in");
  assert.equal(page.status, 200);
  assert.match(page.headers.get("content-type") ?? "", /text\/html/);
  assert.match(page.html, /<label for="email">Email<\/label>/);
  assert.match(page.html, /<input id="email" name="email" type="email"/);
  assert.match(page.html, /<input id="password" name="password" type="password"/);
  for (const path of ["/dashboard/keys", "/dashboard/team", "/dashboard/nowhere"]) {
    assert.equal((await v.get(path)).headers.get("location"), "/dashboard/sign-in", path);
  }
});

dbTest(
  "signing in sets an HttpOnly, SameSite=Lax session cookie whose token the database keeps only hashed",
  async () => {
    const { deps, owner, team, visitor } = await dashboardFixture();
    const v = visitor();
    const res = await v.post("/dashboard/sign-in", { email: owner.email.toUpperCase(), password: PASSWORD });
    assert.equal(res.status, 303);
    assert.equal(res.headers.get("location"), "/dashboard/keys");
    const cookie = res.headers.get("set-cookie") ?? "";
    assert.match(cookie, /^dashboard_session=[0-9A-Za-z]{43};/);
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\//);
    assert.doesNotMatch(cookie, /Secure/);
    const token = cookie.split(";")[0].split("=")[1];
    const rows = await deps.sql`select token_hash from dashboard_sessions s join dashboard_users u on u.id = s.user_id
    where u.id = ${owner.id}`;
    assert.equal(rows.length, 1);
    assert.notEqual(rows[0].token_hash, token);
    const page = await v.get("/dashboard/keys");
    assert.equal(page.status, 200);
    assert.ok(page.html.includes(team.name));
    assert.ok(page.html.includes(owner.email));
  },
);

dbTest("behind TLS the session cookie is Secure and __Host- prefixed", async () => {
  const { owner, visitor } = await dashboardFixture({ TRUST_PROXY: true });
  const v = visitor({ "X-Forwarded-Proto": "https", "X-Forwarded-Host": "dash.example.com" });
  const res = await v.post("/dashboard/sign-in", { email: owner.email, password: PASSWORD }, {
    Origin: "https://dash.example.com",
  });
  assert.equal(res.status, 303);
  const cookie = res.headers.get("set-cookie") ?? "";
  assert.match(cookie, /^__Host-dashboard_session=/);
  assert.match(cookie, /; Secure/);
  assert.match(cookie, /; HttpOnly/);
  assert.equal((await v.get("/dashboard/keys")).status, 200);
});

dbTest("a wrong password and an unknown email get the same 401 page", async () => {
  const { owner, visitor } = await dashboardFixture();
  const v = visitor();
  const wrong = await v.post("/dashboard/sign-in", { email: owner.email, password: "not the password at all" });
  const unknown = await v.post("/dashboard/sign-in", { email: randomEmail("nobody"), password: PASSWORD });
  assert.equal(wrong.status, 401);
  assert.equal(unknown.status, 401);
  const message = "That email and password do not match an account.";
  assert.ok(wrong.html.includes(message) && unknown.html.includes(message));
  assert.equal(wrong.headers.get("set-cookie"), null);
  assert.equal((await v.post("/dashboard/sign-in", { email: "", password: "" })).status, 400);
});

dbTest(
  "sign-in locks an account after 5 failures in 15 minutes, even for the right password, and says when to retry",
  async () => {
    const { owner, visitor } = await dashboardFixture();
    for (let i = 0; i < ACCOUNT_FAILURES; i++) {
      // Each failure from another address: the account's own limit is what stops the guessing.
      const res = await visitor().post("/dashboard/sign-in", { email: owner.email, password: `wrong password ${i}` });
      assert.equal(res.status, 401);
    }
    const locked = await visitor().post("/dashboard/sign-in", { email: owner.email, password: PASSWORD });
    assert.equal(locked.status, 429);
    const retry = Number(locked.headers.get("retry-after"));
    assert.ok(retry > 14 * 60 && retry <= 15 * 60, String(retry));
    assert.match(locked.html, /Try again in 15 minutes/);
    assert.equal(locked.headers.get("set-cookie"), null);
  },
);

dbTest("sign-in locks an IP address after 20 failures on any accounts; other addresses still sign in", async () => {
  const { owner, visitor } = await dashboardFixture();
  const ip = randomIp();
  for (let i = 0; i < IP_FAILURES; i++) {
    const res = await visitor({ "X-Forwarded-For": ip }).post("/dashboard/sign-in", {
      email: randomEmail("guess"),
      password: PASSWORD,
    });
    assert.equal(res.status, 401);
  }
  const locked = await visitor({ "X-Forwarded-For": ip }).post("/dashboard/sign-in", {
    email: owner.email,
    password: PASSWORD,
  });
  assert.equal(locked.status, 429);
  assert.equal((await visitor().post("/dashboard/sign-in", { email: owner.email, password: PASSWORD })).status, 303);
});

dbTest("signing in often never locks an account: only failures count", async () => {
  const { owner, visitor } = await dashboardFixture();
  for (let i = 0; i < ACCOUNT_FAILURES + 2; i++) {
    assert.equal((await visitor().post("/dashboard/sign-in", { email: owner.email, password: PASSWORD })).status, 303);
  }
});

dbTest("sign-out revokes the session: the old cookie opens nothing", async () => {
  const { owner, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const cookie = v.cookie;
  const out = await v.post("/dashboard/sign-out");
  assert.equal(out.status, 303);
  assert.equal(out.headers.get("location"), "/dashboard/sign-in");
  assert.match(out.headers.get("set-cookie") ?? "", /Max-Age=0/);
  const again = visitor();
  again.cookie = cookie;
  const res = await again.get("/dashboard/keys");
  assert.equal(res.status, 303);
  assert.equal(res.headers.get("location"), "/dashboard/sign-in");
});

dbTest("sign out everywhere revokes every session of the user and no one else's", async () => {
  const { owner, member, visitor } = await dashboardFixture();
  const [laptop, phone, colleague] = [visitor(), visitor(), visitor()];
  await laptop.signIn(owner.email);
  await phone.signIn(owner.email);
  await colleague.signIn(member.email);
  const res = await laptop.post("/dashboard/sign-out-everywhere");
  assert.equal(res.status, 303);
  assert.equal((await phone.get("/dashboard/keys")).status, 303);
  assert.equal((await laptop.get("/dashboard/keys")).status, 303);
  assert.equal((await colleague.get("/dashboard/keys")).status, 200);
});

dbTest("a session ends after 12 idle hours, and 7 days after sign-in however busy", async () => {
  let clock = Date.now();
  const { owner, visitor } = await dashboardFixture({}, () => clock);
  const idle = visitor();
  await idle.signIn(owner.email);
  clock += 12 * 60 * 60_000 - 60_000;
  assert.equal((await idle.get("/dashboard/keys")).status, 200);
  clock += 12 * 60 * 60_000 + 60_000;
  assert.equal((await idle.get("/dashboard/keys")).status, 303);

  const busy = visitor();
  await busy.signIn(owner.email);
  const signedIn = clock;
  while (clock + 11 * 60 * 60_000 < signedIn + 7 * 24 * 60 * 60_000) {
    clock += 11 * 60 * 60_000;
    assert.equal((await busy.get("/dashboard/keys")).status, 200, `${(clock - signedIn) / 3_600_000} h`);
  }
  clock = signedIn + 7 * 24 * 60 * 60_000 + 1000;
  assert.equal((await busy.get("/dashboard/keys")).status, 303);
});

dbTest("a cross-site form post is refused with 403, with or without a session", async () => {
  const { deps, team, owner, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const before = await deps.sql`select count(*)::int as n from api_keys where team_id = ${team.id}`;
  const crossSite = { Origin: "https://evil.example", "Sec-Fetch-Site": "cross-site" };
  assert.equal((await v.post("/dashboard/keys", { kind: "sk_live" }, crossSite)).status, 403);
  assert.equal((await v.post("/dashboard/sign-out-everywhere", {}, crossSite)).status, 403);
  // No Origin and no Sec-Fetch-Site (an old browser or a script): refused too.
  assert.equal(
    (await v.post("/dashboard/keys", { kind: "sk_live" }, { Origin: "", "Sec-Fetch-Site": "" })).status,
    403,
  );
  // Logging a victim in to the attacker's account (login forgery) is refused the same way.
  const signIn = await visitor().post("/dashboard/sign-in", { email: owner.email, password: PASSWORD }, crossSite);
  assert.equal(signIn.status, 403);
  const after = await deps.sql`select count(*)::int as n from api_keys where team_id = ${team.id}`;
  assert.equal(after[0].n, before[0].n);
  assert.equal((await v.get("/dashboard/keys")).status, 200);
});

dbTest("a same-origin post without the session's forgery token is refused with 403", async () => {
  const { deps, team, owner, visitor } = await dashboardFixture();
  const v = visitor();
  await v.signIn(owner.email);
  const token = v.csrf;
  v.csrf = undefined;
  assert.equal((await v.post("/dashboard/keys", { kind: "sk_live" })).status, 403);
  v.csrf = "x".repeat(32);
  assert.equal((await v.post("/dashboard/keys", { kind: "sk_live" })).status, 403);
  // Another session's token does not do either.
  const other = visitor();
  await other.signIn(owner.email);
  v.csrf = other.csrf;
  assert.notEqual(other.csrf, token);
  assert.equal((await v.post("/dashboard/keys", { kind: "sk_live" })).status, 403);
  const [{ n }] = await deps.sql`select count(*)::int as n from api_keys where team_id = ${team.id}`;
  assert.equal(n, 3);
  v.csrf = token;
  assert.equal((await v.post("/dashboard/keys", { kind: "sk_live" })).status, 201);
});

dbTest("dashboard pages are not cached or framed", async () => {
  const { visitor } = await dashboardFixture();
  const page = await visitor().get("/dashboard/sign-in");
  assert.equal(page.headers.get("cache-control"), "no-store");
  assert.equal(page.headers.get("x-frame-options"), "DENY");
  assert.match(page.headers.get("content-security-policy") ?? "", /frame-ancestors 'none'/);
});
