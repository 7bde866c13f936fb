import type { Child } from "hono/jsx";
import { toUsd } from "../../shared/money.ts";

/** A short status as a labelled badge (the word is the information: colour only repeats it). */
export function Badge(props: { value: string; children?: Child }) {
  return <span class={`badge badge-${props.value.replace(/[^a-z_]/g, "")}`}>{props.children ?? props.value}</span>;
}

/** Micro-dollars as dollars, to the tenth of a cent where it matters. */
export function usd(micros: number): string {
  return `$${toUsd(micros).toFixed(micros % 10_000 === 0 ? 2 : 4)}`;
}

/** A message's status: the pipeline's, followed by the provider's report when there is one. */
export function Status(props: { m: { status: string; delivery_status: string | null } }) {
  return (
    <>
      <Badge value={props.m.status} />
      {props.m.delivery_status && (
        <>
          {" "}
          <Badge value={props.m.delivery_status} />
        </>
      )}
    </>
  );
}
