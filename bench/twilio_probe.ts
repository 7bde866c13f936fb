/**
 * The fake Twilio of the sustained scenario (harness/fakes/fake_servers.ts), in the bench's own
 * process: the service sends its SMS to it through its real Twilio provider, and each message's text
 * carries the time its request was due (a template variable the open-loop generator fills in), so the
 * time from that due time to the provider call is read as each message arrives.
 */
import { startFakeTwilio } from "../harness/fakes/fake_servers.ts";
import { epochMs } from "./open_loop.ts";

/** The messages due from a given time on that have reached the fake Twilio, and how long each took. */
export interface Recording {
  /** Epoch ms: messages due before it are not counted. */
  readonly since: number;
  /** Messages counted so far. */
  count: number;
  /** From each one's due time to its arrival, ms (the first `count` entries). */
  latencies: Float64Array;
}

/** A fake Twilio that times the messages it receives. */
export interface TwilioProbe {
  /** The service's environment that sends its SMS here. */
  env: Record<string, string>;
  /** Starts a new recording (replacing the last one). */
  record(since: number): Recording;
  close(): Promise<void>;
}

/** Reads the due time a message's text carries (the first 13-digit epoch ms in it), or NaN. */
export function dueTimeOf(formBody: string): number {
  const text = new URLSearchParams(formBody).get("Body") ?? "";
  const match = /(\d{13}(?:\.\d+)?)/.exec(text);
  return match ? Number(match[1]) : NaN;
}

/** Starts the fake Twilio; it keeps no message (the fake's own log is cleared every second). */
export function startTwilioProbe(): TwilioProbe {
  const credentials = { accountSid: `AC${"b".repeat(32)}`, authToken: crypto.randomUUID().replaceAll("-", "") };
  let recording: Recording = { since: Infinity, count: 0, latencies: new Float64Array(0) };
  const fake = startFakeTwilio({
    ...credentials,
    // Called when a create has been checked, before it is answered: the request just recorded is this one.
    hold: () => {
      const now = epochMs();
      const due = dueTimeOf(fake.requests.at(-1)?.body ?? "");
      if (!(due >= recording.since)) return undefined;
      if (recording.count === recording.latencies.length) {
        const grown = new Float64Array(Math.max(1 << 16, recording.latencies.length * 2));
        grown.set(recording.latencies);
        recording.latencies = grown;
      }
      recording.latencies[recording.count++] = now - due;
      return undefined;
    },
  });
  // The fake keeps every request and message for tests; a sustained run sends millions.
  const trim = setInterval(() => {
    fake.requests.length = 0;
    fake.messages.length = 0;
  }, 1000);
  return {
    env: {
      TWILIO_ACCOUNT_SID: credentials.accountSid,
      TWILIO_AUTH_TOKEN: credentials.authToken,
      TWILIO_BASE_URL: fake.url,
    },
    record(since) {
      recording = { since, count: 0, latencies: new Float64Array(1 << 16) };
      return recording;
    },
    async close() {
      clearInterval(trim);
      await fake.close();
    },
  };
}
