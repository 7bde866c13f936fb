import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import { sendingFixture } from "../../worker/testing.ts";
import { PASSWORD, testUser } from "./testing.ts";

const ARTIFACTS = new URL("../../.artifacts/dashboard/", import.meta.url);

/** Writes a full-page screenshot as a test artifact (`.artifacts/dashboard/<name>.png`, git-ignored). */
async function snap(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname as `${string}.png`, fullPage: true });
}

/** Clicks what `selector` names and waits for the page it leads to. */
async function follow(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

/** The text of the first element `selector` names. */
async function text(page: Page, selector: string): Promise<string> {
  return await page.$eval(selector, (el) => el.textContent ?? "");
}

const CSV = [
  "email,first_name,last_name,tags,plan",
  "lin@example.com,Lin,Wu,vip,gold",
  "broken-address,Bad,Row,,",
  "lin@example.com,Lin,Again,,",
].join("\n");

browserTest(
  "in Chromium: import a CSV and read its report, edit a contact's preference, find an API send in the activity log",
  async (browser) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const f = await sendingFixture();
    const owner = await testUser(f.deps, f.team.id, "owner");
    const { origin: base, shutdown } = serveOnLoopback(f.app.fetch);
    const dir = await Deno.makeTempDir({ prefix: "dashboard-csv-" });
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(`${base}/dashboard`);
      await page.type("#email", owner.email);
      await page.type("#password", PASSWORD);
      await follow(page, "button[type=submit]");

      // Contacts: empty at first, with what to do.
      await follow(page, "nav a[href='/dashboard/contacts']");
      assert.match(await text(page, "main"), /No contacts yet/);
      await snap(page, "contacts-empty");

      // A CSV of three rows: one created, two skipped with their row numbers.
      const file = `${dir}/people.csv`;
      await Deno.writeTextFile(file, CSV);
      const input = await page.$("input[type=file]");
      await input!.uploadFile(file);
      await follow(page, "form[action='/dashboard/contacts/imports'] button");
      assert.match(new URL(page.url()).pathname, /^\/dashboard\/contacts\/imports\//);
      await page.waitForFunction("document.querySelector('#progress-title')?.textContent === 'Import finished'");
      assert.match(await text(page, "#import-summary"), /1 created, 2 skipped/);
      const rows = await page.$$eval("td[data-label=Row]", (cells) => cells.map((c) => c.textContent));
      assert.deepEqual(rows, ["3", "4"]);
      assert.match(await text(page, "main"), /already have a contact with email lin@example.com/);
      await snap(page, "contacts-import-report");

      // The contact's page: its custom field from the CSV, then a preference changed in the form.
      await follow(page, "a[href='/dashboard/contacts']");
      await snap(page, "contacts");
      await follow(page, "td[data-label=Email] a");
      assert.equal(await text(page, "h1"), "lin@example.com");
      assert.match(await text(page, "main"), /gold/);
      assert.equal(
        await page.$eval("#email\\.promotional", (el) => (el as unknown as { checked: boolean }).checked),
        false,
      );
      await page.click("#email\\.promotional");
      await follow(page, "form[action$='/preferences'] button");
      assert.match(await text(page, "[role=status]"), /Preferences saved/);
      assert.equal(
        await page.$eval("#email\\.promotional", (el) => (el as unknown as { checked: boolean }).checked),
        true,
      );
      await snap(page, "contact");
      const [{ preferences }] = await f.deps.sql`
        select preferences from contacts where team_id = ${f.team.id} and email = 'lin@example.com'`;
      assert.equal(preferences.email.promotional, true);

      // A message sent through the API with the test key: in the log, and its page shows what was sent.
      await follow(page, "nav a[href='/dashboard/messages']");
      assert.match(await text(page, "main"), /No messages yet/);
      await snap(page, "messages-empty");
      await f.finished(
        await f.post("/api/v1/messages/send", {
          recipient_type: "direct_email",
          direct_email: "reader@example.com",
          subject: "Your receipt {{n}}",
          content: "<p>Thanks for order {{n}}</p>",
          variables: { n: "42" },
        }, f.keys.test),
      );
      await page.reload();
      assert.match(await text(page, "td[data-label=Recipient]"), /reader@example.com/);
      await snap(page, "messages");
      await follow(page, "td[data-label=Created] a");
      assert.equal(await text(page, "#message-subject"), "Your receipt 42");
      assert.equal(await text(page, "#message-body"), "<p>Thanks for order 42</p>");
      await snap(page, "message");

      // On a phone: nothing to scroll sideways.
      await page.setViewport({ width: 375, height: 740, isMobile: true });
      for (
        const [path, name] of [["/dashboard/contacts", "contacts-phone"], ["/dashboard/messages", "messages-phone"]]
      ) {
        await page.goto(`${base}${path}`);
        assert.ok(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), `${path} too wide`);
        await snap(page, name);
      }
    } finally {
      await shutdown();
      await Deno.remove(dir, { recursive: true });
    }
  },
);
