import type { Child } from "hono/jsx";

/**
 * A data table with its column headings (each row's cells carry `data-label`s, which the phone
 * layout shows in place of the headings); `caption` names it for screen readers.
 */
export function Table(props: { headings: string[]; caption?: string; children?: Child }) {
  return (
    <div class="table-wrap">
      <table>
        {props.caption && <caption class="skip">{props.caption}</caption>}
        <thead>
          <tr>
            {props.headings.map((h) => <th scope="col" key={h}>{h}</th>)}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
