/** Micro-dollars in one US dollar: money is kept as integer micro-dollars so sums are exact. */
export const MICROS_PER_USD = 1_000_000;

/** USD (as configured or sent by a caller) to integer micro-dollars. */
export function toMicros(usd: number): number {
  return Math.round(usd * MICROS_PER_USD);
}

/** Integer micro-dollars to USD for an answer. */
export function toUsd(micros: number): number {
  return micros / MICROS_PER_USD;
}
