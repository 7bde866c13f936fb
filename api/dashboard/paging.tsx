import type { Child } from "hono/jsx";

/** A query string of the given values, empty ones left out ('' when none is left). */
export function queryOf(values: Record<string, string | undefined>): string {
  const kept = Object.entries(values).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== "");
  return kept.length > 0 ? `?${new URLSearchParams(kept)}` : "";
}

/**
 * The links of a keyset list: back to the first page, and on to the next one (after the last row
 * shown). Keyset pages have no numbers: a deep page costs what the first does.
 */
export function Pager(
  props: { path: string; query: Record<string, string | undefined>; after?: string; next: string | null },
) {
  const { path, query } = props;
  if (!props.after && !props.next) return null;
  return (
    <nav class="pager" aria-label="Pages">
      {props.after && <a href={`${path}${queryOf({ ...query, after: undefined })}`}>First page</a>}
      {props.next && <a href={`${path}${queryOf({ ...query, after: props.next })}`} rel="next">Next page</a>}
    </nav>
  );
}

/** A short status as a labelled badge (the word is the information: colour only repeats it). */
export function Badge(props: { value: string; children?: Child }) {
  return <span class={`badge badge-${props.value.replace(/[^a-z_]/g, "")}`}>{props.children ?? props.value}</span>;
}
