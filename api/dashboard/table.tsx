import type { Child } from "hono/jsx";

/**
 * A data table with its column headings (each row's cells carry `data-label`s, which the phone
 * layout shows in place of the headings); `caption` names it for screen readers; `actions` adds a
 * last column of buttons, its heading read only by screen readers.
 */
export function Table(props: { headings: string[]; caption?: string; actions?: boolean; children?: Child }) {
  return (
    <div class="table-wrap">
      <table>
        {props.caption && <caption class="skip">{props.caption}</caption>}
        <thead>
          <tr>
            {props.headings.map((h) => <th scope="col" key={h}>{h}</th>)}
            {props.actions && (
              <th scope="col">
                <span class="skip">Actions</span>
              </th>
            )}
          </tr>
        </thead>
        <tbody>{props.children}</tbody>
      </table>
    </div>
  );
}
