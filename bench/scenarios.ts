/**
 * What the bench measures. To add an endpoint family, append a scenario to SCENARIOS:
 * - kind "http": a request factory driven by the load generator at each connection count, compared
 *   with a baseline server (bench/baselines.ts);
 * - kind "rate": a function that does some work against the running service (fan-out
 *   deliveries, workflow executions …) and reports how many things it did in how long.
 */
import { call, type Scenario, withKey } from "./context.ts";
import { DASHBOARD_SCENARIOS } from "./dashboard.ts";
import { OTP_SCENARIOS, OTP_SEND_SCENARIOS, OTP_WRITE_SCENARIOS } from "./otp.ts";
import { RATE_SCENARIOS } from "./rates.ts";
import { SEND_SCENARIOS } from "./sends.ts";

export type { BenchContext, HttpScenario, RateResult, RateScenario, Scenario } from "./context.ts";
export { call, withKey } from "./context.ts";

const CONTACTS_TO_READ = 100;

/**
 * Every scenario, in the order they run. The rate scenarios run first, on a fresh service: their
 * notes give its peak RSS, which would otherwise include what the send bursts left in the heap (V8
 * and PGlite keep the memory they grew to). The table lists them last.
 */
export const SCENARIOS: Scenario[] = [
  ...RATE_SCENARIOS,
  {
    kind: "http",
    name: "GET /healthz",
    baseline: "hono",
    requests: () => [{ method: "GET", path: "/healthz" }],
  },
  {
    kind: "http",
    name: "contact create",
    baseline: "pg-insert",
    requests: (ctx) => (seq) => ({
      method: "POST",
      path: "/api/v1/contacts",
      headers: withKey(ctx),
      body: { email: `bench-${ctx.runId}-${seq}@example.com`, first_name: "Bench" },
    }),
  },
  {
    kind: "http",
    name: "contact get",
    baseline: "pg-select",
    async setup(ctx) {
      const ids: string[] = [];
      for (let n = 0; n < CONTACTS_TO_READ; n++) {
        const contact = await call<{ id: string }>(ctx, {
          method: "POST",
          path: "/api/v1/contacts",
          headers: withKey(ctx),
          body: { email: `read-${ctx.runId}-${n}@example.com`, first_name: "Reader" },
        });
        ids.push(contact.id);
      }
      ctx.state.contactIds = ids;
    },
    requests: (ctx) =>
      (ctx.state.contactIds as string[]).map((id) => ({
        method: "GET",
        path: `/api/v1/contacts/${id}`,
        headers: withKey(ctx),
      })),
  },
  ...OTP_SEND_SCENARIOS,
  ...OTP_SCENARIOS,
  ...OTP_WRITE_SCENARIOS,
  // Reads only: after the HTTP scenarios (it seeds a team of its own), before the sends' backlogs.
  ...DASHBOARD_SCENARIOS,
  // Sends last: each leaves a delivery backlog the bench waits for before the next scenario, except
  // after the very last one of a --quick run (nothing is measured after it).
  ...SEND_SCENARIOS,
];
