import type { Deps } from "../shared/deps.ts";
import type { Identity } from "../shared/identities.ts";
import { TtlCache } from "../shared/ttl_cache.ts";
import { SendLookups } from "../shared/sending/lookups.ts";
import { type BurstDeferral, burstDeferral } from "../shared/sending/pressure.ts";
import { loadSpec } from "../shared/sending/records.ts";
import type { ExecutionSpec, SendSpec } from "../shared/sending/spec.ts";
import type { Template } from "../shared/templates.ts";
import { GroupCoalescer } from "./coalescer.ts";
import { Limiter } from "./limiter.ts";
import { pageSize } from "./recipients.ts";
import { handleSendGroup } from "./sends.ts";
import { categoryOf, type ExecutionContext } from "./prepare.ts";
import { quietHoldOf } from "./hold.ts";

/** What the worker's job handlers share: dependencies, caches and the delivery limiter. */
export interface WorkerContext {
  deps: Deps;
  lookups: SendLookups;
  /** Sends recorded in Postgres, by trigger id (fan-out batches read theirs from here). */
  specs: TtlCache<SendSpec | undefined>;
  /** Delivery jobs running at once: bounds memory and database connections. */
  deliveries: Limiter;
  /** Contacts a page of a fan-out holds (see pageSize). */
  pageSize: number;
  /** Merges `send-group` jobs that arrive together into one delivery pass. */
  groups: GroupCoalescer;
  /** When to hold accepted work back: while this process accepts a burst (SEND_DEFER_RATE). */
  defer: BurstDeferral;
}

/** A worker context over `deps`. */
export function createWorkerContext(deps: Deps): WorkerContext {
  const defer = burstDeferral(deps.config);
  const w: WorkerContext = {
    deps,
    lookups: new SendLookups(deps.sql, deps.now),
    specs: new TtlCache<SendSpec | undefined>(60_000, { max: 1_000 }),
    deliveries: new Limiter(deps.config.DATABASE_URL ? 8 : 4),
    pageSize: pageSize(deps.config),
    groups: new GroupCoalescer((job) => w.deliveries.run(() => handleSendGroup(w, job)), { defer }),
    defer,
  };
  return w;
}

/** The send of a trigger (cached). */
export function specOf(w: WorkerContext, triggerId: string): Promise<SendSpec | undefined> {
  return w.specs.get(triggerId, w.deps.now(), () => loadSpec(w.deps.sql, triggerId));
}

/** Resolves an execution's template and sender once, for all its recipients of a batch. */
export async function executionContext(
  w: WorkerContext,
  spec: SendSpec,
  execution: ExecutionSpec,
  batchNo: number,
): Promise<ExecutionContext> {
  const content = execution.content;
  const teamId = spec.team_id;
  let template: Template | undefined;
  let failure: string | undefined;
  const key = content.channel === "push" ? content.template : content.template_key;
  if (key !== undefined) {
    template = await w.lookups.template(teamId, content.channel, key);
    if (!template) failure = `Template '${key}' not found for team`;
    else if ((content.channel === "sms" || content.channel === "whatsapp") && template.status !== "approved") {
      failure = `Template '${key}' is not approved`;
    }
  }
  const identityId = content.channel === "email" ? undefined : content.identity_id;
  const sender = (country: string | undefined): Promise<Identity | undefined> =>
    w.lookups.identity(teamId, content.channel, {
      id: identityId,
      country: content.channel === "sms" ? country : undefined,
    });
  const quiet = await quietHoldOf(w.deps, teamId, categoryOf(content));
  return { config: w.deps.config, spec, execution, batchNo, template, failure, sender, missing: new Set(), quiet };
}
