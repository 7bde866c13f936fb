import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import { startWorker } from "../../worker/queue.ts";
import { dashboardFixture, PASSWORD, waitForOutbox } from "./testing.ts";

const ARTIFACTS = new URL("../../.artifacts/dashboard/", import.meta.url);

/** Writes a full-page screenshot as a test artifact (`.artifacts/dashboard/<name>.png`, git-ignored). */
async function snap(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname as `${string}.png`, fullPage: true });
}

/** Clicks what `selector` names and waits for the page it leads to. */
async function follow(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

/** Waits until the live preview's element `id` has a text that `pattern` matches (the script swapped it in). */
async function previewShows(page: Page, id: string, pattern: RegExp): Promise<void> {
  // Expressions run in the page, as text: a DOM type library here would change the type check of the whole project.
  await page.waitForFunction(
    `new RegExp(${JSON.stringify(pattern.source)}).test(document.getElementById(${JSON.stringify(id)})?.textContent)`,
  );
}

/** The text of the first element `selector` names. */
function textOf(page: Page, selector: string): Promise<string> {
  return page.$eval(selector, (el) => (el.textContent ?? "").trim());
}

browserTest(
  "in Chromium: create an SMS template, watch the preview and segment count follow the typing, send a test",
  async (browser) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const { app, deps, owner } = await dashboardFixture();
    startWorker(deps);
    const { origin: base, shutdown } = serveOnLoopback(app.fetch);
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 900 });
      await page.goto(`${base}/dashboard/sign-in`);
      await page.type("#email", owner.email);
      await page.type("#password", PASSWORD);
      await follow(page, "button[type=submit]");

      await follow(page, "nav.sections a[href='/dashboard/templates']");
      assert.equal(new URL(page.url()).pathname, "/dashboard/templates/email");
      await follow(page, "nav.tabs a[href='/dashboard/templates/sms']");
      assert.match(await textOf(page, ".empty"), /No SMS templates yet — create one/);
      assert.match(await textOf(page, "#otp-note"), /verify-api-otp-sms/);
      await snap(page, "templates-sms-empty");

      await follow(page, "a.button[href='/dashboard/templates/sms/new']");
      await page.waitForFunction("document.getElementById('template-form').dataset.live === 'on'");
      await page.type("#field-key", "order-shipped");
      await page.type("#field-body", "Hi {{contact_first_name}}, order {{n}} has shipped.");
      await page.type("#sample_first_name", "Ada");
      await page.type("#sample_variables", "n=42");
      await previewShows(page, "preview-text", /^Hi Ada, order 42 has shipped\.$/);
      assert.equal(await textOf(page, "#sms-segments"), "1");
      assert.match(await textOf(page, "#sms-encoding"), /^GSM-7/);
      await snap(page, "template-sms-new-typed");

      // Past 160 GSM-7 characters the message is two segments, and costs two.
      await page.type("#field-body", " " + "x".repeat(140));
      await previewShows(page, "sms-segments", /^2$/);
      assert.match(await textOf(page, "#preview-price"), /^\$0\.015 \(2 × \$0\.0075\)$/);
      await snap(page, "template-sms-two-segments");

      // One emoji makes it UCS-2: 67 code units a part.
      await page.type("#field-body", " 🚚");
      await previewShows(page, "sms-encoding", /^UCS-2 \(173 UTF-16 units/);
      await previewShows(page, "sms-segments", /^3$/);
      await snap(page, "template-sms-ucs2");

      await follow(page, "#template-form button[type=submit]:not([formaction])");
      assert.match(new URL(page.url()).pathname, /^\/dashboard\/templates\/sms\/[0-9a-f-]{36}$/);
      assert.match(await textOf(page, "#saved"), /Saved/);
      await snap(page, "template-sms-saved");

      // The saved page lists the template's variables to fill in the sample.
      assert.equal(await textOf(page, "#sample_variables"), "n=");
      await page.focus("#sample_variables");
      await page.keyboard.press("End");
      await page.keyboard.type("7");
      await page.type("#sample_first_name", "Bo");
      await page.type("#sample_to", "+14155550123");
      await follow(page, "#test-button");
      assert.match(await textOf(page, "#test-result"), /Test accepted/);
      const triggerId = await textOf(page, "#test-trigger-id");
      await snap(page, "template-sms-test-sent");
      const [message] = await waitForOutbox(deps, triggerId);
      assert.equal(message.to_address, "+14155550123");
      assert.match(message.body, /^Hi Bo, order 7 has shipped\. x{140} 🚚$/);

      await follow(page, "a[href='/dashboard/templates/sms']");
      assert.match(await textOf(page, "table"), /order-shipped/);
      await snap(page, "templates-sms-list");

      // The email preview's HTML is a sandboxed frame the page's CSP lets show.
      await page.goto(`${base}/dashboard/templates/email/new`);
      await page.type("#field-key", "welcome");
      await page.type("#field-subject", "Welcome {{contact_first_name}}");
      await page.type("#field-html", "<h1>Hello {{contact_first_name}}</h1>");
      await page.type("#sample_first_name", "Bo");
      await previewShows(page, "preview-subject", /^Welcome Bo$/);
      const frame = await (await page.$("#preview-html"))!.contentFrame();
      await frame!.waitForFunction("document.querySelector('h1')?.textContent === 'Hello Bo'");
      await snap(page, "template-email-new");

      for (const channel of ["whatsapp", "push"]) {
        await page.goto(`${base}/dashboard/templates/${channel}/new`);
        await snap(page, `template-${channel}-new`);
      }
      await page.setViewport({ width: 375, height: 740, isMobile: true });
      await page.goto(`${base}/dashboard/templates/sms`);
      assert.ok(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), "list wider than a phone");
      await snap(page, "templates-sms-list-phone");
      await follow(page, "table a");
      assert.ok(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), "editor wider than a phone");
      await snap(page, "template-sms-phone");
    } finally {
      await shutdown();
    }
  },
);
