/**
 * Fuzz test (`deno task test:fuzz`): for every operation of the OpenAPI document, requests built from
 * its schemas with fast-check (seed FUZZ_SEED, default 42; FUZZ_RUNS requests per operation), mixing
 * fitting values with malformed, missing, oversized, wrong-typed and boundary ones in path, query,
 * headers and body. Asserts: no 5xx; every 4xx is Shape A or Shape B; every 2xx is declared and
 * matches its response schema; and team B's key never reaches team A's data (no 2xx for a request
 * naming A's resources, no answer carrying A's ids or content, A's data unchanged afterwards).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { createService } from "../../main.ts";
import { setLogLevel } from "../../shared/log.ts";
import { dbTest, testDeps, testTeam } from "../../shared/testing.ts";
import { checkUntouched, snapshotTeam, teamFixture } from "./fixtures.ts";
import { documentExamples, examples } from "./examples.ts";
import { type FuzzRequest, Generator, type Operation } from "./generate.ts";
import { bodyText, pathValue, queryString } from "./parts.ts";
import { type Answer, describeRequest, Judge } from "./judge.ts";
import { documentResolver, type Schema } from "./schema_check.ts";

const SEED = Number(Deno.env.get("FUZZ_SEED") ?? 42);
const RUNS = Number(Deno.env.get("FUZZ_RUNS") ?? 1_000);

const deps = await testDeps();
// FUZZ_LOG=1 shows the service's error log (the stacks behind 5xx answers).
if (Deno.env.get("FUZZ_LOG") === "1") setLogLevel("error");
const app = createService(deps);
const adminToken = deps.config.ADMIN_TOKEN!;
const doc = await (await app.request("/api/v1/openapi.json")).json();
const resolve = documentResolver(doc);
const teamA = await teamFixture(app, deps, "alpha", adminToken);
const teamB = await teamFixture(app, deps, "beta", adminToken);
const teamC = await testTeam(deps, "enterprise");
// Keys of team C for the admin's revocation to find (team A's and B's keys are never in the pools).
const revocable: string[] = [];
for (let i = 0; i < 3; i++) {
  const res = await app.request(`/admin/v1/teams/${teamC.team.id}/keys`, {
    method: "POST",
    headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
    body: JSON.stringify({ kind: "test" }),
  });
  revocable.push((await res.json()).prefix);
}
const restoreB = await snapshotTeam(deps, teamB.teamId);
const exampleRefs = {
  own: teamB.refs,
  sessions: teamB.sessions,
  contactExternalId: teamB.contacts[0].external_id,
  workflowId: teamB.workflowId,
  workflowName: teamB.refs.workflowNames[0],
  eventName: "beta_event",
  templateKey: teamB.refs.templateKeys[0],
  tag: "beta-tag",
};

/** Body fields that name an existing resource (a 2xx for one of team A's is a leak). */
const REF_FIELDS = new Set([
  "contact_external_id",
  "workflow_id",
  "workflow_name",
  "segment_id",
  "template_id",
  "template_key",
  "execution_id",
  "trigger_id",
  "contact_id",
]);
const OTP_REF_FIELDS = new Set(["session_token", "token"]);

const foreignValues = new Set(Object.values(teamA.refs).flat());
const judge = new Judge(resolve, { markers: teamA.markers, ids: new Set(teamA.refs.ids) });

const pools = {
  own: teamB.refs,
  foreign: teamA.refs,
  tags: ["beta-tag", "shared-tag", "alpha-tag", "", " ", "x".repeat(300)],
  emails: teamB.contacts.map((c) => c.email),
  templateKeys: ["welcome", "verify-api-otp-email", "missing_key"],
};
const adminPools = {
  ...pools,
  own: {
    ids: [teamC.team.id],
    externalIds: [...revocable, "example.org", "welcome", "default"],
    tokens: [],
    workflowNames: [],
    templateKeys: [],
  },
  foreign: {
    ids: [crypto.randomUUID()],
    externalIds: ["sk_live_unknown"],
    tokens: [],
    workflowNames: [],
    templateKeys: [],
  },
};

/** The document's operations. */
function operations(): Operation[] {
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, Record<string, unknown>>>)) {
    for (const [method, op] of Object.entries(item)) {
      const content = (op.requestBody as { content?: Record<string, { schema: Schema }> } | undefined)?.content;
      out.push({
        method: method.toUpperCase(),
        path,
        parameters: (op.parameters ?? []) as Operation["parameters"],
        body: content?.["application/json"]?.schema,
        responses: op.responses as Operation["responses"],
      });
    }
  }
  return out;
}

const CONTENT_TYPES = [
  "application/json; charset=utf-8",
  "text/plain",
  "application/x-www-form-urlencoded",
  "application/vnd.api+json",
  "multipart/form-data; boundary=x",
];

function headerArb(op: Operation): fc.Arbitrary<Record<string, string>> {
  const admin = op.path.startsWith("/admin/");
  const auth = admin
    ? fc.oneof(
      { weight: 10, arbitrary: fc.constant({ Authorization: `Bearer ${adminToken}` }) },
      { weight: 1, arbitrary: fc.constantFrom({}, { Authorization: "Bearer wrong-token-0123456789" }) },
    )
    : fc.oneof(
      { weight: 16, arbitrary: fc.constant({ "X-API-Key": teamB.keys.live }) },
      { weight: 2, arbitrary: fc.constant({ "X-API-Key": teamB.keys.test }) },
      { weight: 2, arbitrary: fc.constant({ "X-API-Key": teamB.keys.publishable }) },
      {
        weight: 1,
        arbitrary: fc.constantFrom<Record<string, string>>(
          {},
          { "X-API-Key": "" },
          { "X-API-Key": "sk_live_" + "0".repeat(40) },
          { "X-API-Key": "k".repeat(10_000) },
        ),
      },
    );
  // Sending an event requires the team header.
  const events = op.path === "/api/v1/events/send";
  const team = fc.oneof(
    { weight: events ? 2 : 12, arbitrary: fc.constant<Record<string, string>>({}) },
    { weight: events ? 12 : 2, arbitrary: fc.constant({ "X-Team-ID": teamB.teamId }) },
    { weight: 1, arbitrary: fc.constantFrom({ "X-Team-ID": teamA.teamId }, { "X-Team-ID": "not-a-team" }) },
  );
  const idempotency = fc.oneof(
    { weight: 10, arbitrary: fc.constant<Record<string, string>>({}) },
    { weight: 2, arbitrary: fc.uuid().map((u) => ({ "Idempotency-Key": u })) },
    { weight: 1, arbitrary: fc.constantFrom({ "Idempotency-Key": "i".repeat(5_000) }, { "Idempotency-Key": " " }) },
  );
  const contentType = fc.oneof(
    { weight: 14, arbitrary: fc.constant<Record<string, string>>({ "Content-Type": "application/json" }) },
    { weight: 1, arbitrary: fc.constant({}) },
    { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES).map((t) => ({ "Content-Type": t })) },
  );
  return fc.tuple(auth, team, idempotency, contentType).map((parts) => Object.assign({}, ...parts));
}

/** The generator of requests to one operation. */
function requestArb(op: Operation): fc.Arbitrary<FuzzRequest> {
  const admin = op.path.startsWith("/admin/");
  const gen = new Generator(resolve, admin ? adminPools : pools);
  const clean = new Generator(resolve, admin ? adminPools : pools, 0);
  const names = op.parameters.filter((p) => p.in === "path");
  const params = fc.tuple(...names.map((p) => pathValue(gen, p.name, p.schema)));
  const name = `${op.method} ${op.path}`;
  const good = [...examples(name, exampleRefs), ...documentExamples(doc, name, exampleRefs)];
  const body = op.body ? bodyText(clean, gen, op.body, good) : fc.oneof(
    { weight: 8, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: bodyText(clean, gen, undefined, []) },
  );
  return fc.tuple(params, queryString(gen, op), body, headerArb(op)).map(([values, query, text, headers]) => {
    let path = op.path;
    const foreignPath: string[] = [];
    names.forEach((p, i) => {
      const [value, foreign] = values[i];
      path = path.replace(`{${p.name}}`, value);
      if (foreign && !admin) foreignPath.push(`${p.name}=${decodeSafe(value)}`);
    });
    const foreignFields = admin ? [] : bodyRefs(op, text);
    return { method: op.method, path: path + query, headers, body: text, foreignPath, foreignFields };
  });
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Top-level reference fields of a JSON body holding one of team A's references. */
function bodyRefs(op: Operation, text: string | undefined): string[] {
  if (!text || text.length > 100_000) return [];
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return [];
  }
  if (!body || typeof body !== "object" || Array.isArray(body)) return [];
  const fields = op.path.startsWith("/api/v1/otp/") ? OTP_REF_FIELDS : REF_FIELDS;
  return Object.entries(body as Record<string, unknown>)
    .filter(([k, v]) => fields.has(k) && typeof v === "string" && foreignValues.has(v))
    .map(([k]) => k);
}

/** The request with its fields naming team A's resources pointed at nothing instead (and no Idempotency-Key). */
function withoutForeign(req: FuzzRequest): FuzzRequest {
  const body = JSON.parse(req.body!) as Record<string, unknown>;
  for (const field of req.foreignFields) body[field] = `fz-missing-${crypto.randomUUID()}`;
  const { "Idempotency-Key": _, ...headers } = req.headers;
  return { ...req, headers, body: JSON.stringify(body), foreignFields: [] };
}

async function send(req: FuzzRequest): Promise<Answer | undefined> {
  let init: RequestInit;
  try {
    const bodyless = req.method === "GET" || req.method === "HEAD";
    const headers = new Headers(req.headers);
    // As over HTTP: a body comes with its declared length.
    if (!bodyless && req.body !== undefined && !headers.has("content-length")) {
      headers.set("Content-Length", String(new TextEncoder().encode(req.body).length));
    }
    init = { method: req.method, headers, body: bodyless ? undefined : req.body };
  } catch {
    return undefined; // A header no client could send.
  }
  // As the server answers: through the app's fetch.
  const res = await app.fetch(new Request(new URL(req.path, "http://localhost"), init));
  return { status: res.status, contentType: res.headers.get("content-type") ?? "", text: await res.text() };
}

const started = performance.now();
let total = 0;
/** Answers by status class, per operation, for the closing summary. */
const tallies = new Map<string, Record<string, number>>();

for (const [index, op] of operations().entries()) {
  dbTest(`fuzz ${op.method} ${op.path}`, async () => {
    await restoreB();
    const requests = fc.sample(requestArb(op), { seed: SEED + index, numRuns: RUNS });
    const failures = new Map<string, string>();
    for (const req of requests) {
      const res = await send(req);
      if (!res) continue;
      total++;
      const tally = tallies.get(`${op.method} ${op.path}`) ?? {};
      tally[res.status] = (tally[res.status] ?? 0) + 1;
      tallies.set(`${op.method} ${op.path}`, tally);
      const problems = judge.problems(op, req, res);
      // A 2xx with one of team A's references in the body is a leak when the reference made the difference:
      // the same request naming nothing fails.
      if (res.status >= 200 && res.status < 300 && req.foreignFields.length > 0) {
        const replay = await send(withoutForeign(req));
        if (replay && (replay.status < 200 || replay.status >= 300)) {
          problems.push(
            `LEAK: ${res.status} naming team A's ${req.foreignFields.join(", ")}, ${replay.status} naming nothing`,
          );
        }
      }
      for (const problem of problems) {
        const key = problem.replace(/[0-9a-f-]{36}/g, "<id>").slice(0, 120);
        if (!failures.has(key)) failures.set(key, `${problem}\n      request: ${describeRequest(req)}`);
      }
    }
    assert.equal(
      failures.size,
      0,
      `${failures.size} kinds of failure (seed ${SEED + index}):\n  ${[...failures.values()].join("\n  ")}`,
    );
  });
}

dbTest("fuzzing with team B's key left team A's data untouched", async () => {
  const problems = await checkUntouched(app, teamA);
  assert.deepEqual(problems, []);
  const never2xx = [...tallies].filter(([, t]) => !Object.keys(t).some((s) => s.startsWith("2"))).map(([op]) => op);
  if (Deno.env.get("FUZZ_VERBOSE") === "1") {
    for (const [op, t] of tallies) console.log(`  ${op}: ${JSON.stringify(t)}`);
  }
  console.log(`operations never answered 2xx: ${never2xx.length ? never2xx.join(", ") : "none"}`);
  console.log(
    `fuzz: ${total} requests, seed ${SEED}, ${RUNS} per operation, ${
      ((performance.now() - started) / 1000).toFixed(1)
    } s`,
  );
});
