import { hashKey } from "../../shared/api_keys.ts";

/** A file served under /dashboard with its content hash in the name, so that it can be cached for good. */
async function hashedAsset(file: string, type: string) {
  const text = Deno.readTextFileSync(new URL(`./${file}`, import.meta.url));
  const dot = file.lastIndexOf(".");
  const path = `/assets/${file.slice(0, dot).replaceAll("_", "-")}-${(await hashKey(text)).slice(0, 12)}${
    file.slice(dot)
  }`;
  // Cacheable for a year, as any change gives it a new name.
  const response = () =>
    new Response(text, { headers: { "Content-Type": type, "Cache-Control": "public, max-age=31536000, immutable" } });
  return { path, response };
}

const css = await hashedAsset("dashboard.css", "text/css; charset=utf-8");
const previewScript = await hashedAsset("template_preview.js", "text/javascript; charset=utf-8");
const progressScript = await hashedAsset("progress.js", "text/javascript; charset=utf-8");

/** The stylesheet's URL under /dashboard. */
export const CSS_PATH = css.path;

/** The stylesheet's answer. */
export function cssResponse(): Response {
  return css.response();
}

/** The template editor's script (the live preview), served as a file for the CSP's 'self'. */
export const PREVIEW_SCRIPT_PATH = previewScript.path;

/** The template editor script's answer. */
export function previewScriptResponse(): Response {
  return previewScript.response();
}

/** The script that keeps a running send's counters live, served as a file for the CSP's 'self'. */
export const PROGRESS_SCRIPT_PATH = progressScript.path;

/** The progress script's answer. */
export function progressScriptResponse(): Response {
  return progressScript.response();
}
