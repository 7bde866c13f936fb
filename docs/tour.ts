/**
 * The README's tour as data: its fenced `sh` blocks, in order, each with the answer fragments its
 * `# → …` comments promise, so that a test can run the tour as a reader would and hold the README to it.
 */

/** One block of the tour. */
export interface TourBlock {
  /** The block's text, run as written. */
  script: string;
  /** What the block's output must contain, one fragment a `# → …` line. */
  expected: string[];
  /** True when the block changes something (a body or a method other than GET): it is never run twice. */
  writes: boolean;
}

/** The blocks of the `## Tour` section of `markdown` (up to the next `## ` heading). */
export function tourBlocks(markdown: string): TourBlock[] {
  const start = markdown.search(/^## Tour$/m);
  if (start < 0) throw new Error("Cannot read the tour: no '## Tour' section");
  const rest = markdown.slice(start + "## Tour".length);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(([, script]) => ({
    script,
    expected: [...script.matchAll(/^# → (.+)$/gm)].map(([, fragment]) => fragment),
    writes: /(^|\s)(-d|--data|-X)\s/m.test(script),
  }));
}

/** The names a script assigns (`NAME=…`, also several in one `export`), in order of first assignment. */
export function assignedNames(script: string): string[] {
  const code = script.split("\n").filter((line) => !line.trimStart().startsWith("#")).join("\n");
  return [...new Set([...code.matchAll(/(?:^|[\s;])([A-Z][A-Z0-9_]*)=/gm)].map(([, name]) => name))];
}
