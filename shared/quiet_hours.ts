/**
 * Quiet hours: a daily window of local time ("22:00" to "07:00") in which a team's promotional
 * messages are not delivered. Pure time arithmetic over the IANA zone database that Intl carries, so
 * that a window keeps its local hours across daylight-saving changes.
 */

/** A team's quiet hours: local times "HH:MM" (start inclusive, end exclusive) and the team's zone. */
export interface QuietHours {
  start: string;
  end: string;
  timezone: string;
}

const HH_MM = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** True for a time of day written "HH:MM" (00:00 to 23:59). */
export function isTimeOfDay(text: string): boolean {
  return HH_MM.test(text);
}

/** Formatters by zone: building one costs far more than formatting with it. */
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(zone, f);
  }
  return f;
}

/** True when Intl knows `zone` as a time zone (an IANA name such as "Europe/Paris", or "UTC"). */
export function isTimeZone(zone: string): boolean {
  if (zone.length === 0 || zone.length > 64) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/** The wall clock of instant `at` in `zone`. */
interface Wall {
  year: number;
  month: number;
  day: number;
  /** Seconds since local midnight. */
  seconds: number;
}

function wallClock(at: number, zone: string): Wall {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(at)) {
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  }
  return {
    year: parts.year,
    month: parts.month,
    day: parts.day,
    seconds: parts.hour * 3600 + parts.minute * 60 + parts.second,
  };
}

/** How far `zone`'s wall clock is ahead of UTC at instant `at` (ms). */
function offsetAt(at: number, zone: string): number {
  const w = wallClock(at, zone);
  const seconds = Math.floor(at / 1000) * 1000;
  return Date.UTC(w.year, w.month - 1, w.day) + w.seconds * 1000 - seconds;
}

function minutesOf(hhmm: string): number {
  const [, h, m] = HH_MM.exec(hhmm)!;
  return Number(h) * 60 + Number(m);
}

/**
 * The instants at which `zone`'s wall clock reads the local date and minute given (the date may
 * overflow: day 32 is the next month's first). Usually one; two in an autumn fold (the hour that
 * repeats); none in a spring gap (the hour that is skipped), where the time moves forward by the
 * gap's length, as clocks do.
 */
function instantsOf(year: number, month: number, day: number, minute: number, zone: string): number[] {
  const asUtc = Date.UTC(year, month - 1, day, 0, minute);
  // The offsets a day either side: one zone change at most lies between them.
  const before = offsetAt(asUtc - 86_400_000, zone);
  const after = offsetAt(asUtc + 86_400_000, zone);
  const candidates = [...new Set([asUtc - before, asUtc - after])].sort((a, b) => a - b);
  const valid = candidates.filter((t) => offsetAt(t, zone) === asUtc - t);
  return valid.length > 0 ? valid : [asUtc - before];
}

/**
 * Until when a message due at `now` (ms) is held by quiet hours `quiet` for a recipient in `zone`:
 * the window's next end there, when `now` falls inside the window; null when it does not (send now).
 * A window whose end is earlier than its start crosses midnight ("22:00" to "07:00"); one whose ends
 * are equal is empty.
 */
export function heldUntil(now: number, quiet: Pick<QuietHours, "start" | "end">, zone: string): number | null {
  const start = minutesOf(quiet.start) * 60;
  const end = minutesOf(quiet.end) * 60;
  if (start === end) return null;
  const wall = wallClock(now, zone);
  const t = wall.seconds;
  const inside = start < end ? t >= start && t < end : t >= start || t < end;
  if (!inside) return null;
  // Past midnight the end is later today; before it (a window crossing midnight), tomorrow.
  const day = start > end && t >= start ? wall.day + 1 : wall.day;
  const ends = instantsOf(wall.year, wall.month, day, end / 60, zone).filter((at) => at > now);
  return ends[0] ?? null;
}

/** The zone quiet hours are read in for a recipient: the contact's own when valid, else the team's. */
export function recipientZone(quiet: QuietHours, contactZone: string | null | undefined): string {
  return contactZone && isTimeZone(contactZone) ? contactZone : quiet.timezone;
}
