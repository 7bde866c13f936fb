import assert from "node:assert/strict";
import { setLogLevel } from "./log.ts";
import { ALL_ROLES, singleRoleConfig } from "./roles.ts";
import { testConfig } from "./testing.ts";

const ROOT = new URL("../", import.meta.url);
const apiOnly = { api: true, otp: false, worker: false };

Deno.test("singleRoleConfig() refuses the embedded Postgres, which one process owns", () => {
  assert.throws(
    () => singleRoleConfig(testConfig({ DATABASE_URL: undefined }), apiOnly),
    /Cannot run the api role alone on the embedded Postgres.*Set DATABASE_URL/,
  );
});

Deno.test("singleRoleConfig() turns burst deferral off without the worker, keeps it with it", () => {
  setLogLevel("silent");
  const config = testConfig({ DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test", SEND_DEFER_RATE: 1_000 });
  assert.equal(singleRoleConfig(config, apiOnly).SEND_DEFER_RATE, 0);
  assert.equal(singleRoleConfig(config, { api: false, otp: false, worker: true }).SEND_DEFER_RATE, 1_000);
  assert.equal(singleRoleConfig(config, ALL_ROLES).SEND_DEFER_RATE, 1_000);
});

for (const entry of ["api/main.ts", "otp/main.ts", "worker/main.ts"]) {
  Deno.test(`${entry} on the embedded Postgres exits 2 and says why, opening nothing`, async () => {
    const env: Record<string, string> = { ...Deno.env.toObject(), LOG_LEVEL: "warn", NO_COLOR: "1" };
    delete env.DATABASE_URL;
    // The embedded defaults: ENGINE=postgres (a suite run on it) would stop the process for another reason.
    delete env.ENGINE;
    // A folder that must stay unmade: the process stops before it opens any database.
    const dir = await Deno.makeTempDir();
    env.PGLITE_DIR = `${dir}/pglite`;
    env.KV_PATH = `${dir}/kv.sqlite3`;
    try {
      const out = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", entry],
        cwd: ROOT,
        env,
        clearEnv: true,
      })
        .output();
      assert.equal(out.code, 2);
      assert.match(new TextDecoder().decode(out.stderr), /alone on the embedded Postgres.*Set DATABASE_URL/);
      assert.deepEqual([...Deno.readDirSync(dir)], []);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  });
}
