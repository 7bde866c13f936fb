/** What a provider reported about a message after it was sent (`messages.delivery_status`). */
export type DeliveryState = "delivered" | "read" | "failed" | "complained";

/**
 * The reports that say a message reached its recipient (a complaint comes only after delivery):
 * one list for the inbound callbacks that stamp `delivered_at` and the fallbacks that wait for a
 * report before trying the next channel.
 */
export const REACHED_STATES: readonly DeliveryState[] = ["delivered", "read", "complained"];

/** True when a message's delivery report says it reached its recipient. */
export function reportsReached(state: string | null | undefined): boolean {
  return (REACHED_STATES as readonly string[]).includes(state ?? "");
}
