import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { createService } from "../../main.ts";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import { createContact } from "../../shared/contacts/queries.ts";
import { upsertTemplate } from "../../shared/templates.ts";
import { testDeps, testTeam } from "../../shared/testing.ts";
import { startWorker } from "../../worker/queue.ts";
import { PASSWORD, testUser } from "./testing.ts";

const ARTIFACTS = new URL("../../.artifacts/dashboard/", import.meta.url);

async function snap(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname as `${string}.png`, fullPage: true });
}

/** Submits the form that holds `button` and waits for the page it leads to. */
async function submit(page: Page, button: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(button)]);
}

browserTest(
  "in Chromium: a step's delay is edited and the workflow activated; a start through the API shows in its history",
  async (browser) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const deps = await testDeps();
    startWorker(deps);
    const app = createService(deps);
    const { team, keys } = await testTeam(deps);
    const member = await testUser(deps, team.id, "member");
    await upsertTemplate(deps.sql, team.id, "email", "welcome", { subject: "Welcome", html: "<p>Hello</p>" });
    await upsertTemplate(deps.sql, team.id, "sms", "welcome", { body: "Hello" });
    const contact = await createContact(deps.sql, team.id, {
      external_id: `browser-${crypto.randomUUID()}`,
      email: `browser.${crypto.randomUUID().slice(0, 8)}@example.com`,
    });
    const { origin, shutdown } = serveOnLoopback(app.fetch);
    const api = (path: string, body: unknown) =>
      fetch(`${origin}/api/v1${path}`, {
        method: "POST",
        headers: { "X-API-Key": keys.live, "Content-Type": "application/json" },
        body: JSON.stringify(body),
      });
    try {
      // Made through the API, inactive, its only step an hour after the start.
      const made = await api("/workflows", {
        name: "Welcome series",
        event_type: "user_signup",
        is_active: false,
        steps: [{ step_order: 1, channel_type: "email", configuration: { template_id: "welcome", delay_minutes: 60 } }],
      });
      const workflow = await made.json();
      assert.equal(made.status, 201);

      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(`${origin}/dashboard/workflows`);
      await page.type("#email", member.email);
      await page.type("#password", PASSWORD);
      await submit(page, "button[type=submit]");
      await page.goto(`${origin}/dashboard/workflows`);
      await snap(page, "workflows");
      await submit(page, `a[href='/dashboard/workflows/${workflow.id}']`);
      assert.match(await page.$eval("h1", (el) => el.textContent ?? ""), /Welcome series\s*inactive/);

      // The delay: an hour to none.
      await page.evaluate(`document.getElementById("step-1-delay").value = ""`);
      await page.type("#step-1-delay", "0");
      await submit(page, "#step-1 button[type=submit]");
      assert.match(await page.$eval("#notice", (el) => el.textContent ?? ""), /The step is saved/);
      assert.equal(await page.$eval("#step-1-delay", (el) => el.getAttribute("value")), "0");

      await submit(page, "form[action$='/activate'] button");
      assert.match(await page.$eval("#notice", (el) => el.textContent ?? ""), /The workflow is active/);
      await snap(page, "workflow-edited");

      const started = await api("/workflows/trigger", {
        workflow_id: workflow.id,
        recipient_type: "contact",
        contact_external_id: contact.external_id,
      });
      const { trigger_id } = await started.json();
      assert.equal(started.status, 201);

      // The history shows the execution once the worker has made it, and its outcome once it ran; the
      // statistics' status follows when the start's completion is written, a moment after.
      const text = (selector: string) => page.$eval(selector, (el) => el.textContent).catch(() => null);
      const done = async () =>
        await text("[data-execution] [data-field=status]") === "COMPLETED" &&
        await text("#statistics .badge") === "COMPLETED";
      while (!await done()) {
        await new Promise((r) => setTimeout(r, 200));
        await page.reload();
      }
      assert.equal(await page.$eval("[data-execution] [data-count=sent]", (el) => el.textContent), "1");
      assert.equal(await page.$eval("#statistics [data-total=sent]", (el) => el.textContent), "1");
      assert.equal(await page.$eval("#statistics .badge", (el) => el.textContent), "COMPLETED");
      await snap(page, "workflow-history");

      await submit(page, `[data-execution] a[href='/dashboard/sends/${trigger_id}']`);
      assert.match(await page.$eval("h1", (el) => el.textContent ?? ""), /Workflow start/);

      await page.setViewport({ width: 375, height: 740, isMobile: true });
      await page.goto(`${origin}/dashboard/workflows/${workflow.id}`);
      assert.equal(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), true);
      await snap(page, "workflow-phone");
    } finally {
      await shutdown();
    }
  },
);
