import { hashKey } from "../../shared/api_keys.ts";

const CSS = Deno.readTextFileSync(new URL("./dashboard.css", import.meta.url));

/** The stylesheet's URL under /dashboard: its content hash in the name, so it can be cached for good. */
export const CSS_PATH = `/assets/dashboard-${(await hashKey(CSS)).slice(0, 12)}.css`;

/** The stylesheet's answer: cacheable for a year, as any change gives it a new name. */
export function cssResponse(): Response {
  return new Response(CSS, {
    headers: { "Content-Type": "text/css; charset=utf-8", "Cache-Control": "public, max-age=31536000, immutable" },
  });
}
