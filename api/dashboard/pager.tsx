import { BASE } from "./layout.tsx";

/** A keyset cursor from the query string: a positive integer, or undefined (the first page). */
export function integerCursor(value: string | undefined): number | undefined {
  return value && /^\d{1,18}$/.test(value) ? Number(value) : undefined;
}

/**
 * The links under a keyset page: back to the newest, and on to the older rows when there are more.
 * Keyset pages (no offset) cost the same on the thousandth page as on the first.
 */
export function Pager(props: { path: string; param: string; next?: string; first: boolean; label: string }) {
  if (!props.next && props.first) return null;
  return (
    <nav class="pager" aria-label={`Pages of ${props.label}`}>
      {!props.first && <a href={`${BASE}${props.path}`}>Newest</a>}
      {props.next && (
        <a href={`${BASE}${props.path}?${new URLSearchParams({ [props.param]: props.next })}`} rel="next">Older</a>
      )}
    </nav>
  );
}
