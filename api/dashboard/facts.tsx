import type { Child } from "hono/jsx";

/** A list of facts (term and value), laid out as a grid of cards that wraps on a phone. */
export function Facts(props: { children?: Child }) {
  return <dl class="facts">{props.children}</dl>;
}

/** One fact; a missing value reads "none" rather than leaving a blank a reader might take for an error. */
export function Fact(props: { term: string; children?: Child }) {
  const empty = props.children === undefined || props.children === null || props.children === "" ||
    props.children === false;
  return (
    <div>
      <dt>{props.term}</dt>
      <dd>{empty ? <span class="muted">none</span> : props.children}</dd>
    </div>
  );
}
