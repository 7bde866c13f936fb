import assert from "node:assert/strict";
import { parseConfig } from "./config.ts";

/** The start-up message for an environment parseConfig refuses. */
function refusal(env: Record<string, string>): string {
  try {
    parseConfig(env);
  } catch (err) {
    return (err as Error).message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
}

Deno.test("parseConfig: FANOUT_PAGE_SIZE takes 0 to 10,000, 0 (choose by database) when unset", () => {
  assert.equal(parseConfig({}).FANOUT_PAGE_SIZE, 0);
  assert.equal(parseConfig({ FANOUT_PAGE_SIZE: "" }).FANOUT_PAGE_SIZE, 0);
  assert.equal(parseConfig({ FANOUT_PAGE_SIZE: "1" }).FANOUT_PAGE_SIZE, 1);
  assert.equal(parseConfig({ FANOUT_PAGE_SIZE: "10000" }).FANOUT_PAGE_SIZE, 10_000);
});

Deno.test("parseConfig: a FANOUT_PAGE_SIZE out of range or not a whole number stops the start, naming it", () => {
  for (const value of ["10001", "-1", "2.5", "many"]) {
    const message = refusal({ FANOUT_PAGE_SIZE: value });
    assert.match(message, /^Cannot start: invalid configuration\n {2}FANOUT_PAGE_SIZE: /, value);
  }
});

Deno.test("parseConfig: every bad variable has a line of its own", () => {
  const message = refusal({ PORT: "http", LOG_LEVEL: "loud", FANOUT_PAGE_SIZE: "20000" });
  const lines = message.split("\n").slice(1).map((l) => l.trim().split(":")[0]).sort();
  assert.deepEqual(lines, ["FANOUT_PAGE_SIZE", "LOG_LEVEL", "PORT"]);
});

Deno.test("parseConfig: ENGINE is kv unless set, and takes only kv or postgres", () => {
  assert.equal(parseConfig({}).ENGINE, "kv");
  assert.equal(parseConfig({ ENGINE: "postgres", DATABASE_URL: "postgres://db/app" }).ENGINE, "postgres");
  assert.match(refusal({ ENGINE: "redis" }), /^Cannot start: invalid configuration\n {2}ENGINE: /);
});

Deno.test("parseConfig: ENGINE=postgres without DATABASE_URL stops the start, naming both variables", () => {
  const message = refusal({ ENGINE: "postgres" });
  assert.match(message, /^Cannot start: invalid configuration\n {2}ENGINE: /);
  assert.match(message, /ENGINE=postgres needs DATABASE_URL/);
});

Deno.test("parseConfig: CHANNEL_ACCOUNTS_KEY must be the base64 of 32 bytes, and says how to make one", () => {
  const key = btoa(String.fromCharCode(...new Uint8Array(32).fill(7)));
  assert.equal(parseConfig({ CHANNEL_ACCOUNTS_KEY: key }).CHANNEL_ACCOUNTS_KEY, key);
  assert.equal(parseConfig({}).CHANNEL_ACCOUNTS_KEY, undefined);
  for (const value of ["secret", btoa("x".repeat(16)), "#".repeat(44)]) {
    assert.match(refusal({ CHANNEL_ACCOUNTS_KEY: value }), /CHANNEL_ACCOUNTS_KEY: .*openssl rand -base64 32/);
  }
});
