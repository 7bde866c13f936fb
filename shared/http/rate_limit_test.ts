import assert from "node:assert/strict";
import { caller, contactsFixture, randomContact } from "../../api/contacts/testing.ts";
import { dbTest, testTeam } from "../testing.ts";

function rateHeaders(headers: Headers) {
  return {
    limit: headers.get("x-ratelimit-limit"),
    remaining: headers.get("x-ratelimit-remaining"),
    reset: Number(headers.get("x-ratelimit-reset")),
  };
}

dbTest("rateLimit() answers 429 with Retry-After past the plan's hourly limit, headers on every answer", async () => {
  const { call, sandbox } = await contactsFixture({ RATE_LIMIT_PRO: 3 });
  const nowSeconds = Date.now() / 1000;
  const answers = [
    await call("POST", "", randomContact()),
    await call("POST", "", { email: "broken" }),
    await call("GET", `/${crypto.randomUUID()}`),
  ];
  assert.deepEqual(answers.map((a) => a.status), [201, 400, 404]);
  answers.forEach((a, i) => {
    const h = rateHeaders(a.headers);
    assert.equal(h.limit, "3");
    assert.equal(h.remaining, String(2 - i));
    assert.ok(h.reset > nowSeconds && h.reset <= nowSeconds + 3600, `reset ${h.reset}`);
    assert.ok(a.headers.get("x-request-id"));
  });
  const refused = await call("POST", "", randomContact());
  assert.equal(refused.status, 429);
  assert.deepEqual(refused.body, {
    statusCode: 429,
    message: "Rate limit exceeded",
    error: "Too Many Requests",
    code: "rate_limit_exceeded",
  });
  const retryAfter = Number(refused.headers.get("retry-after"));
  assert.ok(retryAfter >= 1 && retryAfter <= 3600, `Retry-After ${retryAfter}`);
  assert.deepEqual(rateHeaders(refused.headers), rateHeaders(answers[2].headers));
  assert.equal((await call("GET", "")).status, 429);
  assert.equal((await sandbox("GET", "")).body.data.length, 1, "the refused create created nothing");
});

dbTest("rateLimit() counts each API key on its own: a refused key does not refuse another team", async () => {
  const { call, sandbox, app, deps } = await contactsFixture({ RATE_LIMIT_PRO: 3 });
  for (let i = 0; i < 3; i++) assert.equal((await call("GET", "")).status, 200);
  assert.equal((await call("GET", "")).status, 429);
  const list = await sandbox("GET", "");
  assert.equal(list.status, 200);
  assert.equal(list.headers.get("x-ratelimit-remaining"), "2");
  const other = caller(app, (await testTeam(deps)).keys.live);
  assert.equal((await other("GET", "")).status, 200);
});

dbTest("rateLimit() applies the free plan's limit to a free team", async () => {
  const { app, deps } = await contactsFixture({ RATE_LIMIT_FREE: 1 });
  const free = caller(app, (await testTeam(deps, "free")).keys.live);
  const first = await free("GET", "");
  assert.equal(first.status, 200);
  assert.equal(first.headers.get("x-ratelimit-limit"), "1");
  assert.equal(first.headers.get("x-ratelimit-remaining"), "0");
  assert.equal((await free("POST", "", randomContact())).status, 429);
});
