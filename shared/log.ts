/** Levels in increasing order of severity. */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 } as const;
export type LogLevel = keyof typeof LEVELS;

let threshold: number = LEVELS.info;

/** Sets the lowest level that is written. */
export function setLogLevel(level: LogLevel): void {
  threshold = LEVELS[level];
}

/** True when lines of `level` are written: check it before building costly fields. */
export function logs(level: Exclude<LogLevel, "silent">): boolean {
  return LEVELS[level] >= threshold;
}

/** One log line as text: `{time, level, msg, ...fields}` as JSON (also what start-up notices print). */
export function logLine(level: Exclude<LogLevel, "silent">, msg: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields });
}

/** Writes one JSON line: `{time, level, msg, ...fields}`. */
export function log(level: Exclude<LogLevel, "silent">, msg: string, fields: Record<string, unknown> = {}): void {
  if (LEVELS[level] < threshold) return;
  const line = logLine(level, msg, fields);
  if (LEVELS[level] >= LEVELS.warn) console.error(line);
  else console.log(line);
}
