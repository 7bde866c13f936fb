import type { KvCommitter } from "../../kv.ts";
import { kvKeys } from "../../kv.ts";
import type { HotState } from "../ports.ts";
import { CheckedCommitter } from "./checked_commit.ts";
import { KvIdempotency } from "./idempotency.ts";
import { KvRecords } from "./records.ts";
import { kvAtomically } from "./unit.ts";
import { WindowCounter } from "./window_counter.ts";

/** The hot-state ports on Deno KV, sharing the process's group committer (`committer`) for plain writes. */
export function kvHotState(kv: Deno.Kv, committer: KvCommitter): HotState {
  const checked = new CheckedCommitter(kv);
  const counters = new WindowCounter(kv);
  return {
    counters,
    idempotency: new KvIdempotency(kv, committer, checked),
    otpSessions: new KvRecords(kv, checked, {
      record: kvKeys.otp.session,
      active: kvKeys.otp.active,
      activeOf: kvKeys.otp.activeOfTeam,
    }),
    atomically: (work) => kvAtomically(checked, work),
    close: () => counters.close(),
  };
}
