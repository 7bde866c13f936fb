import type { Context } from "hono";
import { Hono } from "hono";
import type { Deps } from "../../shared/deps.ts";
import type { Channel } from "../../shared/providers/types.ts";
import { deleteTemplate, findTemplate, listTemplates, type Template, upsertTemplate } from "../../shared/templates.ts";
import { templateVariables } from "../templates/routes.ts";
import { auditChange } from "./audit.ts";
import type { DashboardEnv } from "./env.ts";
import { MessagePage } from "./layout.tsx";
import {
  type Draft,
  draftFromForm,
  draftOf,
  draftTemplate,
  emptyDraft,
  isChannel,
  type Sample,
  sampleFromForm,
  validateDraft,
} from "./template_form.ts";
import { EditorPage } from "./template_editor.tsx";
import { CHANNEL_NAMES, editorPath, listPath, TemplateListPage } from "./template_list.tsx";
import { otpKeyOf, PreviewPanel, previewTemplate } from "./template_preview.tsx";
import { sendTest, type TestSendResult } from "./template_test_send.ts";

/** The header the editor's script sets to get the preview alone, not the whole page. */
export const FRAGMENT_HEADER = "X-Dashboard-Fragment";

/** Sample values of the OTP variables, so that a reserved template previews as a code would read. */
const OTP_SAMPLE: Record<string, string> = { otp_code: "123456", expiry_minutes: "10", 1: "123456", 2: "10" };

/**
 * A first sample for the editor: the user's own address for email, and a `name=` line for each
 * variable the template names (contact variables come from the sample's names and address instead).
 */
function firstSample(channel: Channel, email: string, template?: Template, key?: string): Sample {
  const otp = (template?.key ?? key) === otpKeyOf(channel);
  const names = template ? templateVariables(template).filter((n) => !n.startsWith("contact_")) : [];
  const all = otp
    ? [...new Set([...names, ...(channel === "whatsapp" ? ["1", "2"] : ["otp_code", "expiry_minutes"])])]
    : names;
  const variablesText = all.map((n) => `${n}=${otp ? OTP_SAMPLE[n] ?? "" : ""}`).join("\n");
  return { to: channel === "email" ? email : "", firstName: "", lastName: "", variablesText };
}

/** The dashboard's template pages: per channel list, create, edit, preview, test and delete (members too). */
export function templatesRoutes(deps: Deps) {
  const app = new Hono<DashboardEnv>();

  function notFound(c: Context<DashboardEnv>) {
    const message = "There is no such template in your team: it may have been deleted.";
    return c.html(<MessagePage title="Template not found" message={message} user={c.get("user")} />, 404);
  }

  /** The channel the path names, or undefined (the caller answers 404). */
  function channelOf(c: Context<DashboardEnv>): Channel | undefined {
    const channel = c.req.param("channel");
    return isChannel(channel) ? channel : undefined;
  }

  /** The signed-in team's template the path names, of the path's channel; undefined for any other. */
  async function storedOf(c: Context<DashboardEnv>): Promise<Template | undefined> {
    const channel = channelOf(c);
    const id = c.req.param("id");
    return channel && id ? await findTemplate(deps.sql, c.get("user").teamId, channel, id) : undefined;
  }

  function editor(
    c: Context<DashboardEnv>,
    page: {
      channel: Channel;
      stored?: Template;
      draft: Draft;
      sample: Sample;
      errors?: string[];
      test?: TestSendResult;
    },
    status: 200 | 400 = 200,
  ) {
    const user = c.get("user");
    const previewed = draftTemplate(page.channel, user.teamId, page.draft);
    const preview = previewTemplate(deps.config, previewed, page.sample);
    const saved = c.req.method === "GET" && c.req.query("saved") !== undefined;
    return c.html(<EditorPage user={user} {...page} preview={preview} previewed={previewed} saved={saved} />, status);
  }

  /** The preview of a posted draft: the fragment for the editor's script, else the whole editor. */
  async function preview(c: Context<DashboardEnv>, channel: Channel, stored?: Template) {
    const form = await c.req.parseBody();
    const draft = draftFromForm(form);
    if (stored) draft.key = stored.key;
    const sample = sampleFromForm(form);
    if (!c.req.header(FRAGMENT_HEADER)) return editor(c, { channel, stored, draft, sample });
    const previewed = draftTemplate(channel, c.get("user").teamId, draft);
    return c.html(<PreviewPanel preview={previewTemplate(deps.config, previewed, sample)} template={previewed} />);
  }

  function audit(c: Context<DashboardEnv>, what: string, template: { channel: Channel; key: string }) {
    auditChange(c, `dashboard template ${what}`, { channel: template.channel, key: template.key });
  }

  app.get("/templates", (c) => c.redirect(listPath("email"), 303));

  app.get("/templates/:channel", async (c) => {
    const channel = channelOf(c);
    if (!channel) return notFound(c);
    const user = c.get("user");
    const templates = await listTemplates(deps.sql, user.teamId, channel);
    return c.html(<TemplateListPage user={user} channel={channel} templates={templates} />);
  });

  app.get("/templates/:channel/new", (c) => {
    const channel = channelOf(c);
    if (!channel) return notFound(c);
    const key = c.req.query("key")?.trim() ?? "";
    const sample = firstSample(channel, c.get("user").email, undefined, key);
    return editor(c, { channel, draft: { ...emptyDraft(), key }, sample });
  });

  app.post("/templates/:channel/new", async (c) => {
    const channel = channelOf(c);
    if (!channel) return notFound(c);
    const user = c.get("user");
    const form = await c.req.parseBody();
    const draft = draftFromForm(form);
    const sample = sampleFromForm(form);
    const valid = validateDraft(channel, draft);
    if (!valid.ok) return editor(c, { channel, draft, sample, errors: valid.errors }, 400);
    if (await findTemplate(deps.sql, user.teamId, channel, draft.key)) {
      const errors = [`A ${CHANNEL_NAMES[channel]} template with the key ${draft.key} exists already: edit that one`];
      return editor(c, { channel, draft, sample, errors }, 400);
    }
    const template = await upsertTemplate(deps.sql, user.teamId, channel, draft.key, valid.input);
    audit(c, "created", template);
    return c.redirect(`${editorPath(channel, template.id)}?saved`, 303);
  });

  app.post("/templates/:channel/new/preview", (c) => {
    const channel = channelOf(c);
    return channel ? preview(c, channel) : notFound(c);
  });

  app.get("/templates/:channel/:id", async (c) => {
    const stored = await storedOf(c);
    if (!stored) return notFound(c);
    const sample = firstSample(stored.channel, c.get("user").email, stored);
    return editor(c, { channel: stored.channel, stored, draft: draftOf(stored), sample });
  });

  app.post("/templates/:channel/:id", async (c) => {
    const stored = await storedOf(c);
    if (!stored) return notFound(c);
    const form = await c.req.parseBody();
    const draft = { ...draftFromForm(form), key: stored.key };
    const valid = validateDraft(stored.channel, draft);
    if (!valid.ok) {
      return editor(
        c,
        { channel: stored.channel, stored, draft, sample: sampleFromForm(form), errors: valid.errors },
        400,
      );
    }
    const template = await upsertTemplate(deps.sql, stored.team_id, stored.channel, stored.key, valid.input);
    audit(c, "saved", template);
    return c.redirect(`${editorPath(stored.channel, stored.id)}?saved`, 303);
  });

  app.post("/templates/:channel/:id/preview", async (c) => {
    const stored = await storedOf(c);
    return stored ? await preview(c, stored.channel, stored) : notFound(c);
  });

  app.post("/templates/:channel/:id/test", async (c) => {
    const stored = await storedOf(c);
    if (!stored) return notFound(c);
    const form = await c.req.parseBody();
    const sample = sampleFromForm(form);
    const test = await sendTest(deps, stored, sample);
    if (test.ok) audit(c, "test sent", stored);
    // The page comes back as it was typed: the test sent the saved template, the draft stays unsaved.
    const draft = { ...draftFromForm(form), key: stored.key };
    return editor(c, { channel: stored.channel, stored, draft, sample, test }, test.ok ? 200 : 400);
  });

  app.post("/templates/:channel/:id/delete", async (c) => {
    const stored = await storedOf(c);
    if (!stored || !await deleteTemplate(deps.sql, stored.team_id, stored.channel, stored.id)) return notFound(c);
    audit(c, "deleted", stored);
    return c.redirect(listPath(stored.channel), 303);
  });

  return app;
}
