import { createService } from "../main.ts";
import type { Config } from "../shared/config.ts";
import { type Deps, hotStateDeps, type Team } from "../shared/deps.ts";
import { KvQueue } from "../shared/engine/kv/queue.ts";
import { kvHotState } from "../shared/engine/kv/hot_state.ts";
import type { HotState } from "../shared/engine/ports.ts";
import { KvCommitter } from "../shared/kv.ts";
import { toMicros } from "../shared/money.ts";
import type { TeamKeys } from "../shared/teams.ts";
import { jsonRequest, randomEmail, testDeps, testTeam } from "../shared/testing.ts";
import { topUp } from "../shared/wallet.ts";

/** A test's world: the app on (possibly clock-injected) deps, a team with money, and helpers. */
export interface OtpWorld {
  app: ReturnType<typeof createService>;
  deps: Deps;
  team: Team;
  keys: TeamKeys;
  /** This test's client IP (a random X-Forwarded-For), so IP limits never cross tests. */
  ip: string;
  post(path: string, body: unknown, options?: { key?: string; ip?: string }): Promise<Response>;
}

/** A random E.164 number in the US (+1 and a non-Canadian area code). */
export function randomPhone(prefix = "+1415"): string {
  const digits = Array.from(crypto.getRandomValues(new Uint8Array(7)), (b) => String(b % 10)).join("");
  return `${prefix}${digits}`;
}

/** A random IPv4 address from the documentation range (never contacted). */
export function randomIp(): string {
  const [a, b] = crypto.getRandomValues(new Uint8Array(2));
  return `198.51.${a}.${b}`;
}

/**
 * A new team (with `balance` USD) and the app. `now` injects a clock: pass a function reading a
 * variable the test moves; `kv` and `committer` wrap what the code sees (spies): with `kv`, the OTP
 * hot state (sessions, records, units of work) is Deno KV through it, on the test's KV database.
 */
export async function otpWorld(
  options: {
    config?: Partial<Config>;
    now?: () => number;
    balance?: number;
    kv?: (kv: Deno.Kv) => Deno.Kv;
    committer?: (committer: KvCommitter) => KvCommitter;
  } = {},
): Promise<OtpWorld> {
  const base = await testDeps(options.config);
  const kv = options.kv ? options.kv(base.kv) : base.kv;
  const committer = options.committer ? options.committer(base.committer) : base.committer;
  // A wrapped KV (a spy) holds the OTP hot state too, so that the spy sees its reads and commits.
  const hot = options.kv ? kvHotState(kv, committer) : undefined;
  const deps: Deps = {
    ...base,
    now: options.now ?? base.now,
    kv,
    committer,
    // The counters stay the runtime's: a spy has no reason to see them. Jobs of its units go to its
    // queue: such a test runs on Deno KV, whatever the suite's ENGINE.
    ...(hot
      ? {
        ...hotStateDeps(hot),
        counter: base.counter,
        queue: new KvQueue(kv, committer),
        config: { ...base.config, ENGINE: "kv" as const },
      }
      : {}),
  };
  const { team, keys } = await testTeam(deps);
  if ((options.balance ?? 10) > 0) await topUp(deps.sql, team.id, toMicros(options.balance ?? 10));
  const app = createService(deps);
  const ip = randomIp();
  return {
    app,
    deps,
    team,
    keys,
    ip,
    post: poster(app, keys, ip),
  };
}

/**
 * Another replica of `world`'s service: the same team, keys, database and client IP, with the hot
 * state `hot` and the job queue `queue` (a replica's own objects over a shared store).
 */
export function replicaOf(world: OtpWorld, hot: HotState, queue: Deps["queue"]): OtpWorld {
  const deps: Deps = {
    ...world.deps,
    ...hotStateDeps(hot),
    queue,
  };
  const app = createService(deps);
  return {
    ...world,
    app,
    deps,
    post: poster(app, world.keys, world.ip),
  };
}

/** Posts to the app's OTP routes with the team's live key (or `key`) from `ip` (or another). */
function poster(app: OtpWorld["app"], keys: TeamKeys, ip: string): OtpWorld["post"] {
  return (path, body, opts = {}) =>
    Promise.resolve(app.request(
      `/api/v1/otp${path}`,
      jsonRequest("POST", body, { "X-API-Key": opts.key ?? keys.live, "X-Forwarded-For": opts.ip ?? ip }),
    ));
}

/** A sandbox send body on the given channels with random recipients. */
export function sandboxSend(channels: string[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    channels,
    recipients: { email: randomEmail("otp"), sms: randomPhone(), whatsapp: randomPhone() },
    sandbox_mode: true,
    ...extra,
  };
}

/** Sends a sandbox OTP and returns the token and the codes. */
export async function openSandbox(
  world: OtpWorld,
  channels: string[],
  extra: Record<string, unknown> = {},
): Promise<{ token: string; otps: Record<string, string>; body: Record<string, unknown> }> {
  const res = await world.post("/send", sandboxSend(channels, extra));
  const body = await res.json();
  if (res.status !== 200) throw new Error(`send failed: ${res.status} ${JSON.stringify(body)}`);
  return { token: body.session_token, otps: body.sandbox_otps, body };
}

/** A code that is not `code` (same length). */
export function wrong(code: string): string {
  return code.split("").map((d) => String((Number(d) + 1) % 10)).join("");
}

/**
 * A KV whose atomic commits record what they enqueued, once they succeed (the values, in order), and
 * a group committer writing through it.
 */
export function spyEnqueued(kv: Deno.Kv): { kv: Deno.Kv; committer: KvCommitter; enqueued: unknown[] } {
  const enqueued: unknown[] = [];
  const spiedOp = (op: Deno.AtomicOperation): Deno.AtomicOperation => {
    const pending: unknown[] = [];
    const spied: Deno.AtomicOperation = new Proxy(op, {
      get: (target, prop) => {
        if (prop === "commit") {
          return async () => {
            const res = await target.commit();
            if (res.ok) enqueued.push(...pending);
            return res;
          };
        }
        const value = Reflect.get(target, prop);
        if (typeof value !== "function") return value;
        return (...args: unknown[]) => {
          if (prop === "enqueue") pending.push(args[0]);
          const result = value.apply(target, args);
          return result === target ? spied : result;
        };
      },
    });
    return spied;
  };
  const spiedKv = new Proxy(kv, {
    get: (target, prop) => {
      if (prop === "atomic") return () => spiedOp(target.atomic());
      const value = Reflect.get(target, prop);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { kv: spiedKv, committer: new KvCommitter(spiedKv), enqueued };
}
