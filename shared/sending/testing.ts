import { newUuidV7 } from "./ids.ts";
import type { SendSpec } from "./spec.ts";

/**
 * A send for tests: by default a sandbox SMS to one direct number with template `templateKey`,
 * accepted now; `extra` replaces any field (another channel, recipient, variables …).
 */
export function testSendSpec(teamId: string, extra: Partial<SendSpec> = {}, templateKey = "t"): SendSpec {
  return {
    trigger_id: newUuidV7(),
    job_id: crypto.randomUUID(),
    team_id: teamId,
    sandbox: true,
    trigger_type: "sms",
    recipient_type: "direct_sms",
    recipient: { type: "direct", address: "+14155550123" },
    executions: [{
      id: crypto.randomUUID(),
      content: { channel: "sms", template_key: templateKey, category: "transactional" },
    }],
    variables: {},
    metadata: {},
    created_at: Date.now(),
    scheduled_for: null,
    ...extra,
  };
}
