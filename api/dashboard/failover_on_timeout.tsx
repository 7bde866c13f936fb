import type { Channel } from "../../shared/providers/types.ts";
import { field } from "./form.ts";
import { BASE, CsrfField } from "./layout.tsx";
import type { SessionUser } from "./sessions.ts";

/** The form field that carries the wanted setting: "on" or "off". */
export const FAILOVER_FIELD = "failover_on_timeout";

/** The setting a form asks for, or undefined when it names none (a forged or broken form). */
export function failoverOfForm(form: Record<string, unknown>): boolean | undefined {
  const value = field(form, FAILOVER_FIELD);
  return value === "on" ? true : value === "off" ? false : undefined;
}

/**
 * Whether a channel's message moves on to the next account when a hand-over timed out, with what that
 * risks; `manage` adds the button that switches it (the channel's accounts are saved again as they are).
 */
export function FailoverOnTimeout(
  props: { user: SessionUser; channel: Channel; channelLabel: string; allowed: boolean; manage: boolean },
) {
  const { user, channel, channelLabel, allowed, manage } = props;
  const verb = allowed ? "Forbid" : "Allow";
  return (
    <div class="row">
      <p class="grow" id={`${channel}-failover`}>
        Failover after a timeout:{" "}
        <strong>{allowed ? "allowed" : "not allowed"}</strong>. A provider that timed out may have delivered the message
        all the same, so handing it to the next account may make the recipient get it twice.
      </p>
      {manage && (
        <form method="post" action={`${BASE}/channel-accounts/${channel}/failover-on-timeout`}>
          <CsrfField user={user} />
          <input type="hidden" name={FAILOVER_FIELD} value={allowed ? "off" : "on"} />
          <button
            type="submit"
            class="quiet"
            aria-label={`${verb} failover after a timeout for ${channelLabel}`}
            aria-describedby={`${channel}-failover`}
          >
            {verb} failover after a timeout
          </button>
        </form>
      )}
    </div>
  );
}
