/**
 * OTP scenarios (issue 4), in SCENARIOS (bench/scenarios.ts).
 *
 * Send and verify are KV work (a session read, an atomic commit), so they are compared with the
 * `kv-set` baseline (one awaited kv.set). The OTP send limits (20 sends an hour per client IP, 5 per
 * recipient, 100 active sessions) would stop the send scenario and the setup of OTP_WRITE_SCENARIOS
 * at a few dozen sessions: the bench starts the service with them off
 * (`OTP_IP_LIMIT_PER_HOUR=0`, `OTP_RECIPIENT_LIMIT=0`, `OTP_ACTIVE_SESSION_LIMIT=0`, see main.ts).
 */
import { type BenchContext, type HttpScenario, withKey } from "./context.ts";
import { sendOnce } from "./load.ts";

/** Verifies a second the write scenario's setup provides for (above any rate measured so far). */
const MAX_RATE = 10_000;
/** Wrong codes a write session takes before it locks (the schema's largest max_attempts). */
const ATTEMPTS = 20;

interface Opened {
  token: string;
  codes: Record<string, string>;
}

/** The body of a sandbox OTP send (test key: nothing sent or charged) to recipient number `n`. */
function sendBody(ctx: BenchContext, label: string, n: number, channels: string[]) {
  return {
    channels,
    recipients: { email: `otp-${label}-${ctx.runId}-${n}@example.com`, sms: `+1415${String(n).padStart(7, "0")}` },
    sandbox_mode: true,
    config: { max_attempts: ATTEMPTS, expiry_minutes: 60 },
  };
}

/** Opens sandbox sessions, 20 requests at a time, until `count` or a 429. */
async function openSessions(
  ctx: BenchContext,
  count: number,
  label: string,
  channels = ["email"],
): Promise<Opened[]> {
  const opened: Opened[] = [];
  let next = 0;
  let refused = false;
  const worker = async () => {
    while (next < count && !refused) {
      const n = next++;
      const res = await sendOnce(ctx.url, {
        method: "POST",
        path: "/api/v1/otp/send",
        headers: { "x-api-key": ctx.keys.test },
        body: sendBody(ctx, label, n, channels),
      });
      if (res.status === 429) refused = true;
      else if (res.status !== 200) throw new Error(`OTP send answered ${res.status}: ${res.body.slice(0, 300)}`);
      else {
        const body = JSON.parse(res.body);
        opened.push({ token: body.session_token, codes: body.sandbox_otps });
      }
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  if (opened.length === 0) throw new Error("OTP send refused every session (429)");
  return opened;
}

/** OTP send under load: a sandbox session per request, to a new recipient each (limits off). */
export const OTP_SEND_SCENARIOS: HttpScenario[] = [
  {
    kind: "http",
    name: "OTP send (sandbox, email)",
    baseline: "kv-set",
    requests: (ctx) => (seq) => ({
      method: "POST",
      path: "/api/v1/otp/send",
      headers: { "x-api-key": ctx.keys.test },
      body: sendBody(ctx, "load", seq, ["email"]),
    }),
  },
];

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
      // Enough sessions that none locks before the last measurement ends.
      const wanted = Math.ceil((ctx.loadSeconds * MAX_RATE) / ATTEMPTS);
      const sessions = await openSessions(ctx, wanted, "write", ["email", "sms"]);
      if (sessions.length < wanted) {
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
