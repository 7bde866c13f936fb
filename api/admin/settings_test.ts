import assert from "node:assert/strict";
import { createService } from "../../main.ts";
import { FRAUD_GUARD_DEFAULTS } from "../../shared/team_settings.ts";
import { dbTest, jsonRequest, testDeps, testTeam } from "../../shared/testing.ts";

const TOKEN = { Authorization: "Bearer test-admin-token-0123456789" };

async function setup() {
  const deps = await testDeps();
  const { team } = await testTeam(deps);
  const app = createService(deps);
  return {
    team,
    patch: (body: unknown, teamId = team.id) =>
      Promise.resolve(app.request(`/admin/v1/teams/${teamId}/settings`, jsonRequest("PATCH", body, TOKEN))),
    get: (teamId = team.id) => Promise.resolve(app.request(`/admin/v1/teams/${teamId}/settings`, { headers: TOKEN })),
  };
}

dbTest("GET /admin/v1/teams/{id}/settings answers the defaults for a team that set nothing", async () => {
  const { get } = await setup();
  const res = await get();
  assert.equal(res.status, 200);
  assert.deepEqual(await res.json(), {
    otp: { allowed_countries: null, fraud_guard: FRAUD_GUARD_DEFAULTS },
    quiet_hours: null,
  });
});

dbTest("PATCH settings merges field by field, upper-cases countries and answers the whole object", async () => {
  const { patch, get } = await setup();
  const first = await patch({ otp: { allowed_countries: ["gb", "FR", "gb"], fraud_guard: { min_sends: 50 } } });
  assert.equal(first.status, 200);
  const expected = {
    otp: { allowed_countries: ["GB", "FR"], fraud_guard: { ...FRAUD_GUARD_DEFAULTS, min_sends: 50 } },
    quiet_hours: null,
  };
  assert.deepEqual(await first.json(), expected);

  // Left out: kept. Given: replaced (thresholds one by one, the list as a whole).
  const second = await patch({ otp: { fraud_guard: { block_minutes: 15, enabled: false } } });
  expected.otp.fraud_guard = { ...expected.otp.fraud_guard, block_minutes: 15, enabled: false };
  assert.deepEqual(await second.json(), expected);
  const third = await patch({ otp: { allowed_countries: ["de"] } });
  expected.otp.allowed_countries = ["DE"];
  assert.deepEqual(await third.json(), expected);
  assert.deepEqual(await (await get()).json(), expected);

  const cleared = await patch({ otp: { allowed_countries: null } });
  assert.equal((await cleared.json()).otp.allowed_countries, null);
});

dbTest("PATCH settings refuses bad codes, non-positive thresholds and unknown fields with 400", async () => {
  const { patch, get } = await setup();
  const bodies = [
    { otp: { allowed_countries: ["XX"] } },
    { otp: { allowed_countries: ["GBR"] } },
    { otp: { allowed_countries: "GB" } },
    { otp: { fraud_guard: { min_sends: 0 } } },
    { otp: { fraud_guard: { min_sends: 2.5 } } },
    { otp: { fraud_guard: { min_verify_ratio: 0 } } },
    { otp: { fraud_guard: { min_verify_ratio: 1.5 } } },
    { otp: { fraud_guard: { block_minutes: -1 } } },
    { otp: { fraud_guard: { window_minutes: 1 } } },
    { otp: { fraud_guard: { enabled: "yes" } } },
    { otp: { fraud_guard: { threshold: 3 } } },
    { quiet_hours: { start: "24:00", end: "07:00", timezone: "Europe/Paris" } },
    { quiet_hours: { start: "22:00", end: "7:00", timezone: "Europe/Paris" } },
    { quiet_hours: { start: "22:00", end: "07:00", timezone: "Europe/Pari" } },
    { quiet_hours: { start: "22:00", end: "07:00" } },
    { quiet_hours: { start: "22:00", end: "22:00", timezone: "UTC" } },
    { quiet_hours: { start: "22:00", end: "07:00", timezone: "UTC", days: [1] } },
    { quiet_hours: "22:00-07:00" },
  ];
  for (const body of bodies) {
    const res = await patch(body);
    assert.equal(res.status, 400, JSON.stringify(body));
    const error = await res.json();
    assert.equal(error.statusCode, 400);
    assert.equal(typeof error.code, "string");
  }
  const xx = await (await patch({ otp: { allowed_countries: ["gb", "xx"] } })).json();
  assert.match(JSON.stringify(xx.message), /XX is not an ISO 3166-1 alpha-2 code/);
  const zone = await (await patch({ quiet_hours: { start: "22:00", end: "07:00", timezone: "Mars/Olympus" } })).json();
  assert.match(JSON.stringify(zone.message), /quiet_hours.timezone \\"Mars\/Olympus\\" is not an IANA time zone/);
  const time = await (await patch({ quiet_hours: { start: "22h", end: "07:00", timezone: "UTC" } })).json();
  assert.match(JSON.stringify(time.message), /quiet_hours.start \\"22h\\" is not a time of day HH:MM/);
  const settings = await (await get()).json();
  assert.deepEqual([settings.otp.allowed_countries, settings.quiet_hours], [null, null], "nothing stored");
});

dbTest("PATCH settings sets quiet hours whole, keeps them when left out and clears them with null", async () => {
  const { patch, get } = await setup();
  const quiet = { start: "21:30", end: "08:00", timezone: "America/New_York" };
  const set = await patch({ quiet_hours: quiet });
  assert.equal(set.status, 200);
  assert.deepEqual((await set.json()).quiet_hours, quiet);
  await patch({ otp: { allowed_countries: ["FR"] } });
  assert.deepEqual((await (await get()).json()).quiet_hours, quiet, "left out: kept");
  const other = { start: "12:00", end: "14:00", timezone: "UTC" };
  assert.deepEqual((await (await patch({ quiet_hours: other })).json()).quiet_hours, other);
  const cleared = await (await patch({ quiet_hours: null })).json();
  assert.equal(cleared.quiet_hours, null);
  assert.deepEqual(cleared.otp.allowed_countries, ["FR"], "the rest kept");
});

dbTest("settings of an unknown team are 404 'Team not found'", async () => {
  const { patch, get } = await setup();
  for (const res of [await get(crypto.randomUUID()), await patch({}, crypto.randomUUID()), await get("nope")]) {
    assert.equal(res.status, 404);
    assert.equal((await res.json()).code, "team_not_found");
  }
});
