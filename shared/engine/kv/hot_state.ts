import type { KvCommitter } from "../../kv.ts";
import { kvKeys } from "../../kv.ts";
import type { HotState, RecordKind } from "../ports.ts";
import { sendKeys } from "../../sending/keys.ts";
import { CheckedCommitter } from "./checked_commit.ts";
import { KvIdempotency } from "./idempotency.ts";
import { KvRecords, type RecordKeys } from "./records.ts";
import { KvSendState } from "./send_state.ts";
import { kvAtomically } from "./unit.ts";
import { WindowCounter } from "./window_counter.ts";

/** The hot-state ports on Deno KV, sharing the process's group committer (`committer`) for plain writes. */
export function kvHotState(kv: Deno.Kv, committer: KvCommitter): HotState {
  const checked = new CheckedCommitter(kv);
  const counters = new WindowCounter(kv);
  const records = new Map<RecordKind, KvRecords>();
  const recordsOf = (kind: RecordKind) => {
    let store = records.get(kind);
    if (!store) records.set(kind, store = new KvRecords(kv, checked, RECORD_KEYS[kind]));
    return store;
  };
  return {
    counters,
    idempotency: new KvIdempotency(kv, committer, checked),
    otpSessions: recordsOf("otp_sessions"),
    records: recordsOf,
    sendState: new KvSendState(kv, committer),
    atomically: (work) => kvAtomically(checked, work),
    close: () => counters.close(),
  };
}

/** Where each kind of record lives in KV (the keys the service wrote before the ports, kept). */
const RECORD_KEYS: Record<RecordKind, RecordKeys> = {
  otp_sessions: {
    record: kvKeys.otp.session,
    active: { entry: kvKeys.otp.active, of: kvKeys.otp.activeOfTeam },
  },
  send_triggers: { record: (_scope, id) => sendKeys.trigger(id) },
  execution_triggers: { record: (_scope, id) => sendKeys.executionTrigger(id) },
  otp_fraud_blocks: { record: kvKeys.otp.fraudBlock },
  otp_fraud_verified: {
    record: kvKeys.otp.fraudVerified,
    active: { entry: kvKeys.otp.fraudVerifiedActive, of: kvKeys.otp.fraudVerifiedOf },
  },
  dashboard_sign_in_locks: { record: kvKeys.signInLock },
  webhook_enqueued: { record: (_scope, id) => kvKeys.webhookEnqueued(id) },
  send_dispatch: { record: (_scope, id) => sendKeys.dispatch(id) },
  send_push_pace: { record: (_scope, id) => sendKeys.pushPace(id) },
};
