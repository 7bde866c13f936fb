/**
 * Sustained, not burst (issue 29): direct SMS offered at a fixed rate for a while by an open-loop
 * generator in a process of its own (bench/open_loop.ts), delivered by the service's real Twilio
 * provider to a fake Twilio in the bench's process (bench/twilio_probe.ts). At each offered rate, in
 * turn: the accept rate achieved, the delivered rate, the backlog (accepted, not yet at Twilio) at the
 * start, middle and end, and the time from each send's due time to its provider call. The highest
 * offered rate whose backlog stayed flat is the rate the service sustains.
 */
import postgres from "postgres";
import type { BenchContext, RateResult, RateScenario } from "./context.ts";
import { withKey } from "./context.ts";
import { progress } from "./measure.ts";
import { epochMs, type GeneratorPlan, type GeneratorResult, type GeneratorTick } from "./open_loop.ts";
import { describePgCost, measurePg } from "./pg_cost.ts";
import { percentile } from "./percentile.ts";
import { cpuSeconds } from "./server.ts";
import { freshTeam, prepareTeam, TEMPLATE_KEY } from "./team.ts";
import { seedMessages } from "./history.ts";
import type { Recording } from "./twilio_probe.ts";

/** Offered rates (sends/s) and seconds at each, unless `--sustained=` and `--sustained-seconds=` say otherwise. */
export const SUSTAINED_RATES = [2_000, 4_000, 8_000, 12_000];
export const SUSTAINED_SECONDS = { full: 60, quick: 10 };
/** Keep-alive connections of the generator (requests are pipelined on them). */
const CONNECTIONS = 128;
/** How long the bench waits, after the schedule, for the last accepted sends to reach Twilio. */
const DRAIN_LIMIT_MS = 120_000;

/** Counts at one moment, cumulative: the service's backlog is `accepted - delivered`. */
export interface DepthSample {
  /** Seconds since the first due time. */
  t: number;
  /** Requests the generator had written. */
  sent: number;
  accepted: number;
  /** Messages at the fake Twilio. */
  delivered: number;
}

/** Whether a step kept up, and why not. */
export interface StepVerdict {
  keptUp: boolean;
  why: string;
}

/** The sample closest to `t` seconds (samples are in time order, non-empty). */
export function sampleAt(samples: DepthSample[], t: number): DepthSample {
  return samples.reduce((best, s) => Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best);
}

/**
 * A step kept up when nearly every offered send was accepted and what was offered but not yet at
 * Twilio (requests waiting for an answer plus the service's backlog) stayed flat over its second half:
 * it grew by less than half a second of offered sends. Growing, however long the run, means the
 * service accepts or delivers slower than the offered rate.
 */
export function verdict(
  offered: number,
  seconds: number,
  accepted: number,
  errors: number,
  samples: DepthSample[],
): StepVerdict {
  if (accepted < 0.98 * offered * seconds) {
    return { keptUp: false, why: `accepted ${accepted} of ${Math.round(offered * seconds)}` };
  }
  if (errors > 0) return { keptUp: false, why: `${errors} errors` };
  if (samples.length === 0) return { keptUp: false, why: "no backlog samples" };
  const depth = (s: DepthSample) => s.sent - s.delivered;
  const growth = depth(sampleAt(samples, seconds)) - depth(sampleAt(samples, seconds / 2));
  if (growth > offered / 2) return { keptUp: false, why: `backlog grew by ${growth} over the second half` };
  return { keptUp: true, why: "backlog flat" };
}

/** The highest offered rate of the steps that kept up, or undefined. */
export function highestKeptUp(steps: { offered: number; keptUp: boolean }[]): number | undefined {
  const kept = steps.filter((s) => s.keptUp).map((s) => s.offered);
  return kept.length > 0 ? Math.max(...kept) : undefined;
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");

/** Runs the generator process at `plan`, feeding its progress lines to `onTick`; answers its result. */
async function generate(plan: GeneratorPlan, onTick: (tick: GeneratorTick) => void): Promise<GeneratorResult> {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      `--config=${new URL("../deno.json", import.meta.url).pathname}`,
      new URL("./open_loop.ts", import.meta.url).pathname,
      JSON.stringify(plan),
    ],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  let result: GeneratorResult | undefined;
  let rest = "";
  for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
    const lines = (rest + chunk).split("\n");
    rest = lines.pop()!;
    for (const line of lines.filter(Boolean)) {
      const message = JSON.parse(line) as GeneratorTick | GeneratorResult;
      if (message.type === "tick") onTick(message);
      else result = message;
    }
  }
  const status = await child.status;
  if (!result) throw new Error(`the load generator exited with ${status.code} and no result`);
  return result;
}

/** Waits until `recording` has counted `wanted` messages, or until it has not moved for 10 s. */
async function delivered(recording: Recording, wanted: number): Promise<boolean> {
  const deadline = performance.now() + DRAIN_LIMIT_MS;
  let last = -1;
  let movedAt = performance.now();
  while (recording.count < wanted && performance.now() < deadline) {
    if (recording.count !== last) {
      last = recording.count;
      movedAt = performance.now();
    } else if (performance.now() - movedAt > 10_000) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return recording.count >= wanted;
}

/** One offered rate: the generator's run, then the wait for its sends to reach Twilio. */
async function step(ctx: BenchContext, team: BenchContext, offered: number, firstSeq: number) {
  const seconds = ctx.sustained.seconds;
  const probe = ctx.twilio!;
  const samples: DepthSample[] = [];
  // Everything due from now on is this step's.
  const recording = probe.record(epochMs());
  const cpuBefore = { service: await cpuSeconds(ctx.servicePid), bench: await cpuSeconds(Deno.pid) };
  const [{ result, allDelivered }, pg] = await measurePg(ctx.pg, async () => {
    const result = await generate({
      url: ctx.url,
      method: "POST",
      path: "/api/v1/sms/send",
      headers: withKey(team),
      bodyTemplate: JSON.stringify({
        template_key: TEMPLATE_KEY,
        recipient_type: "direct_sms",
        direct_phone: "+1555%SEQ%",
        variables: { name: "%AT%" },
      }),
      rate: offered,
      durationSec: seconds,
      connections: CONNECTIONS,
      firstSeq,
    }, (tick) => {
      // Epoch ms for now: made relative to the first due time once the result gives it.
      samples.push({ t: tick.at, sent: tick.sent, accepted: tick.ok, delivered: recording.count });
    });
    return { result, allDelivered: await delivered(recording, result.ok) };
  });
  const cpu = {
    service: (await cpuSeconds(ctx.servicePid)) - cpuBefore.service,
    bench: (await cpuSeconds(Deno.pid)) - cpuBefore.bench,
  };
  for (const s of samples) s.t = (s.t - result.startedAt) / 1000;
  const errors = result.sent - result.ok;
  const check = verdict(offered, seconds, result.ok, errors, samples);
  const inWindow = samples.filter((s) => s.t <= seconds + 0.3);
  const atEnd = inWindow.at(-1) ?? { t: seconds, sent: 0, accepted: 0, delivered: 0 };
  const latencies = recording.latencies.subarray(0, recording.count).sort();
  const depth = (t: number) => {
    const s = sampleAt(samples, t);
    return `${int(s.accepted - s.delivered)}+${int(s.sent - s.accepted)}`;
  };
  const acceptSeconds = Math.max(seconds, (result.lastAnswerAt - result.startedAt) / 1000);
  const wall = (pid: number) => `${int((pid * 1e6) / Math.max(1, result.sent))} µs/send`;
  const note = [
    `offered ${int(offered)}/s for ${seconds} s`,
    `accepted ${int(result.ok / acceptSeconds)}/s (accept p50 ${result.p50Ms.toFixed(1)} ms, p99 ${
      result.p99Ms.toFixed(1)
    } ms from due time)`,
    `delivered ${int(atEnd.delivered / Math.max(atEnd.t, 0.001))}/s while offered`,
    `backlog (accepted, not at Twilio + sent, not answered) at start/middle/end ${depth(seconds * 0.1)} / ${
      depth(seconds / 2)
    } / ${depth(seconds)}`,
    check.keptUp ? "**kept up**" : `**fell behind** (${check.why})`,
    allDelivered ? "all delivered" : `${int(result.ok - recording.count)} never reached Twilio`,
    `service ${wall(cpu.service)}, generator ${wall(result.cpuSeconds)} (${
      int((result.cpuSeconds * 100) / acceptSeconds)
    } % of a core; at worst ${result.maxLagMs.toFixed(0)} ms behind its schedule), fake Twilio + bench ${
      wall(cpu.bench)
    } (${int((cpu.bench * 100) / acceptSeconds)} % of a core)`,
    ...(pg ? [describePgCost(pg, { "accepted send": result.ok, delivery: recording.count })] : []),
    `load average ${Deno.loadavg()[0].toFixed(1)}`,
  ].join("; ");
  progress(`sustained @${int(offered)}/s: ${note}`);
  return {
    offered,
    keptUp: check.keptUp,
    result: {
      name: `sustained: direct SMS offered at ${int(offered)}/s`,
      count: atEnd.delivered,
      seconds: Math.max(atEnd.t, 0.001),
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      errors: errors + (allDelivered ? 0 : result.ok - recording.count),
      note,
    } satisfies RateResult,
  };
}

/** Messages the sustained team has sent before the load starts (with DATABASE_URL). */
const HISTORY_MESSAGES = 200_000;

/** The sustained scenario: every offered rate in turn, stopping at the first that falls behind. */
export const SUSTAINED_SCENARIO: RateScenario = {
  kind: "rate",
  name: "sustained: direct SMS",
  unit: "deliveries",
  needs: ["twilio"],
  async setup(ctx) {
    const team = await freshTeam(ctx, "sustained");
    await prepareTeam(team);
    ctx.state.sustainedTeam = team;
    if (ctx.databaseUrl) {
      // A service in use: a history, and planner statistics that know the table is not empty.
      const sql = postgres(ctx.databaseUrl, { max: 1, onnotice: () => {} });
      try {
        await seedMessages(sql, team.team.id, 10_000, HISTORY_MESSAGES, "history");
      } finally {
        await sql.end();
      }
    }
  },
  async run(ctx) {
    const team = ctx.state.sustainedTeam as BenchContext;
    const steps: Awaited<ReturnType<typeof step>>[] = [];
    let firstSeq = 0;
    for (const offered of ctx.sustained.rates) {
      const done = await step(ctx, team, offered, firstSeq);
      steps.push(done);
      firstSeq += Math.round(offered * ctx.sustained.seconds);
      // A faster rate would only pile onto a backlog that already grows.
      if (!done.keptUp) break;
    }
    const highest = highestKeptUp(steps);
    const best = steps.find((s) => s.offered === highest);
    const summary: RateResult = {
      name: "sustained: direct SMS, highest offered rate kept up",
      count: highest ?? 0,
      seconds: 1,
      p50Ms: best?.result.p50Ms,
      p99Ms: best?.result.p99Ms,
      note: highest === undefined
        ? `none of ${ctx.sustained.rates.map(int).join(", ")}/s kept up`
        : `${int(highest)}/s for ${ctx.sustained.seconds} s (p50/p99 from due time to the Twilio call); tried ${
          steps.map((s) => `${int(s.offered)}${s.keptUp ? "" : " (fell behind)"}`).join(", ")
        }`,
    };
    progress(`sustained: ${summary.note}`);
    return [...steps.map((s) => s.result), summary];
  },
};
