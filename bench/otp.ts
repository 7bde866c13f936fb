/**
 * OTP scenarios, to append to SCENARIOS (bench/scenarios.ts): `...OTP_SCENARIOS`.
 *
 * Verify is one KV read and one atomic commit per request, so it is compared with the `kv-set`
 * baseline (one awaited kv.set). The OTP send limits (20 sends an hour per client IP, 5 per recipient,
 * 100 active sessions) bound how many sessions setup can open: with the defaults it opens about 20
 * and the requests repeat already-verified channels (the commit checks and writes nothing). Run with
 * `--env=OTP_IP_LIMIT_PER_HOUR=0 --env=OTP_RECIPIENT_LIMIT=0 --env=OTP_ACTIVE_SESSION_LIMIT=0` to
 * let setup open thousands for OTP_WRITE_SCENARIOS, whose verifies each commit a write.
 */
import { sendOnce } from "./load.ts";
import { type BenchContext, type HttpScenario, withKey } from "./scenarios.ts";

/** Sessions setup tries to open (it stops at the first 429). */
const SESSIONS = 4000;
/** Wrong codes a write session takes before it locks (the schema's largest max_attempts). */
const ATTEMPTS = 20;

interface Opened {
  token: string;
  codes: Record<string, string>;
}

/** Opens sandbox sessions (test key: nothing sent or charged) until `count` or a 429. */
async function openSessions(
  ctx: BenchContext,
  count: number,
  label: string,
  channels = ["email"],
): Promise<Opened[]> {
  const opened: Opened[] = [];
  for (let n = 0; n < count; n++) {
    const res = await sendOnce(ctx.url, {
      method: "POST",
      path: "/api/v1/otp/send",
      headers: { "x-api-key": ctx.keys.test },
      body: {
        channels,
        recipients: { email: `otp-${label}-${ctx.runId}-${n}@example.com`, sms: `+1415${String(n).padStart(7, "0")}` },
        sandbox_mode: true,
        config: { max_attempts: ATTEMPTS, expiry_minutes: 60 },
      },
    });
    if (res.status === 429) break;
    if (res.status !== 200) throw new Error(`OTP send answered ${res.status}: ${res.body.slice(0, 300)}`);
    const body = JSON.parse(res.body);
    opened.push({ token: body.session_token, codes: body.sandbox_otps });
  }
  if (opened.length === 0) throw new Error("OTP send refused every session (429)");
  return opened;
}

/** A code that is not `code`. */
function wrong(code: string): string {
  return code.split("").map((d) => String((Number(d) + 1) % 10)).join("");
}

/** OTP verify under load, with the default OTP limits. */
export const OTP_SCENARIOS: HttpScenario[] = [
  {
    kind: "http",
    name: "OTP verify (verified channel again)",
    baseline: "kv-set",
    async setup(ctx) {
      const sessions = await openSessions(ctx, 20, "repeat");
      for (const s of sessions) {
        await sendOnce(ctx.url, {
          method: "POST",
          path: "/api/v1/otp/verify",
          headers: withKey(ctx),
          body: { session_token: s.token, otps: { email: s.codes.email } },
        });
      }
      ctx.state.otpVerified = sessions;
    },
    requests: (ctx) => (seq) => {
      const sessions = ctx.state.otpVerified as Opened[];
      const s = sessions[seq % sessions.length];
      return {
        method: "POST",
        path: "/api/v1/otp/verify",
        headers: withKey(ctx),
        body: { session_token: s.token, otps: { email: s.codes.email } },
      };
    },
  },
];

/**
 * OTP verify where every request commits a write: needs the OTP send limits off (see above) so that
 * setup can open thousands of sessions. Each request gives the right email code (already verified:
 * 200) and a wrong SMS code (one attempt used: a write); a session takes ATTEMPTS of them.
 */
export const OTP_WRITE_SCENARIOS: HttpScenario[] = [
  {
    kind: "http",
    name: "OTP verify (one attempt written each)",
    baseline: "kv-set",
    async setup(ctx) {
      const sessions = await openSessions(ctx, SESSIONS, "write", ["email", "sms"]);
      if (sessions.length < SESSIONS) {
        throw new Error(`OTP send limits stopped setup at ${sessions.length} sessions: run with OTP_*_LIMIT*=0`);
      }
      ctx.state.otpWrite = sessions;
    },
    requests: (ctx) => (seq) => {
      const sessions = ctx.state.otpWrite as Opened[];
      const s = sessions[seq % sessions.length];
      return {
        method: "POST",
        path: "/api/v1/otp/verify",
        headers: withKey(ctx),
        body: { session_token: s.token, otps: { email: s.codes.email, sms: wrong(s.codes.sms) } },
      };
    },
  },
];
