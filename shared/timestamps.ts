const ISO_8601 = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2})?)(\.\d+)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/**
 * Epoch milliseconds of an ISO 8601 date or timestamp, or undefined when it is not one (a day that
 * does not exist, such as 2026-02-30, and a year before 1000 included). A time without a zone is UTC (the interface speaks
 * ISO 8601 UTC); a date alone is its midnight UTC. The one reader of every date a request carries.
 */
export function parseTimestamp(text: string): number | undefined {
  const m = ISO_8601.exec(text.trim());
  if (!m) return undefined;
  const [, year, month, day, time, fraction, zone] = m;
  // Years before 1000 are no date a client means (and year 0 is out of Postgres's range as sent).
  if (Number(year) < 1000) return undefined;
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)));
  if (date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) return undefined;
  const millis = fraction ? fraction.slice(0, 4).padEnd(4, "0") : "";
  const normalized = time
    ? `${year}-${month}-${day}T${time}${millis}${zone ? zone.toUpperCase() : "Z"}`
    : `${year}-${month}-${day}T00:00:00Z`;
  const ms = Date.parse(normalized);
  return Number.isNaN(ms) ? undefined : ms;
}
