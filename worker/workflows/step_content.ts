import type { Content } from "../../shared/sending/spec.ts";
import type { StepRow } from "../../shared/workflows/definitions.ts";
import type { WorkerContext } from "../context.ts";

/** A channel a step sends on. */
export type Channel = StepRow["channel_type"];

/**
 * The pipeline content of a step on `channel` (its own or a fallback channel): its template, and
 * its category, which a fallback channel keeps (a WhatsApp `MARKETING` step is promotional on SMS).
 */
export async function stepContent(w: WorkerContext, teamId: string, step: StepRow, channel: Channel): Promise<Content> {
  const config = step.configuration;
  const key = config.template_id;
  const whatsapp = (channel === "whatsapp" || step.channel_type === "whatsapp")
    ? await w.lookups.template(teamId, "whatsapp", key)
    : undefined;
  const marketing = step.channel_type === "whatsapp"
    ? (config.conversation_category ?? whatsapp?.category) === "MARKETING"
    : config.category === "promotional";
  const category = marketing ? "promotional" : "transactional";
  switch (channel) {
    case "email":
      return {
        channel: "email",
        template_key: key,
        category,
        from_email: typeof config.from_email === "string" ? config.from_email : undefined,
        from_name: typeof config.from_name === "string" ? config.from_name : undefined,
      };
    case "sms":
      return { channel: "sms", template_key: key, category };
    case "whatsapp": {
      const own = channel === step.channel_type ? config.conversation_category : undefined;
      return {
        channel: "whatsapp",
        template_key: key,
        conversation_category: own ?? whatsapp?.category ?? (marketing ? "MARKETING" : "UTILITY"),
      };
    }
  }
}
