import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { keyPrefix } from "../../shared/api_keys.ts";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import { dashboardFixture, PASSWORD } from "./testing.ts";

const ARTIFACTS = new URL("../../.artifacts/dashboard/", import.meta.url);

/** Writes a full-page screenshot as a test artifact (`.artifacts/dashboard/<name>.png`, git-ignored). */
async function snap(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname as `${string}.png`, fullPage: true });
}

/** Clicks what `selector` names and waits for the page it leads to. */
async function follow(page: Page, selector: string): Promise<void> {
  await Promise.all([page.waitForNavigation(), page.click(selector)]);
}

/** The page is no wider than its viewport (nothing to scroll sideways on a phone). */
async function fitsWidth(page: Page): Promise<boolean> {
  // Expressions run in the page, as text: a DOM type library here would change the type check of the whole project.
  return await page.evaluate("document.documentElement.scrollWidth <= innerWidth") as boolean;
}

browserTest(
  "in Chromium: sign in, create and revoke a key, sign out, with a screenshot of every page at 1280 and 375 px",
  async (browser) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const { app, owner, member } = await dashboardFixture();
    const { origin: base, shutdown } = serveOnLoopback(app.fetch);
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });

      await page.goto(`${base}/dashboard`);
      assert.equal(new URL(page.url()).pathname, "/dashboard/sign-in");
      await snap(page, "sign-in");
      // The email field has the focus; the keyboard goes on to the password, then to the button.
      const focused = () => page.evaluate("document.activeElement.id || document.activeElement.textContent");
      assert.equal(await focused(), "email");
      await page.keyboard.press("Tab");
      assert.equal(await focused(), "password");
      await page.keyboard.press("Tab");
      assert.equal(await focused(), "Sign in");
      await page.type("#email", owner.email);
      await page.type("#password", "not the password at all");
      await follow(page, "button[type=submit]");
      // The page comes back with the email kept and the password empty.
      assert.equal(await page.$eval("#email", (el) => el.getAttribute("value")), owner.email);
      assert.match(await page.$eval("[role=alert]", (el) => el.textContent ?? ""), /do not match an account/);
      await snap(page, "sign-in-failed");

      await page.type("#password", PASSWORD);
      await follow(page, "button[type=submit]");
      assert.equal(new URL(page.url()).pathname, "/dashboard/keys");
      assert.equal(await page.$eval("h1", (el) => el.textContent), "API keys");
      const cookies = await browser.cookies();
      const session = cookies.find((c) => c.name === "dashboard_session");
      assert.ok(session?.httpOnly && session.sameSite === "Lax");
      await snap(page, "keys");

      await page.select("#kind", "sk_live");
      await follow(page, "form[action='/dashboard/keys'] button");
      const key = await page.$eval("#new-key", (el) => el.textContent ?? "");
      assert.match(key, /^sk_live_[0-9A-Za-z]{32}$/);
      await snap(page, "key-created");
      const used = await fetch(`${base}/api/v1/contacts`, { headers: { "X-API-Key": key } });
      await used.body?.cancel();
      assert.equal(used.status, 200);

      await follow(page, `button[aria-label='Revoke ${keyPrefix(key)}']`);
      assert.ok(!(await page.content()).includes(keyPrefix(key)));
      const revoked = await fetch(`${base}/api/v1/contacts`, { headers: { "X-API-Key": key } });
      await revoked.body?.cancel();
      assert.equal(revoked.status, 401);
      await snap(page, "key-revoked");

      await follow(page, "nav a[href='/dashboard/team']");
      assert.equal(await page.$eval("h1", (el) => el.textContent), "Team");
      await snap(page, "team");

      await page.setViewport({ width: 375, height: 740, isMobile: true });
      for (const [path, name] of [["/dashboard/keys", "keys-phone"], ["/dashboard/team", "team-phone"]]) {
        await page.goto(`${base}${path}`);
        assert.ok(await fitsWidth(page), `${path} is wider than a phone`);
        await snap(page, name);
      }

      await follow(page, "form[action='/dashboard/sign-out'] button");
      assert.equal(new URL(page.url()).pathname, "/dashboard/sign-in");
      assert.ok(await fitsWidth(page));
      await snap(page, "sign-in-phone");
      await page.goto(`${base}/dashboard/keys`);
      assert.equal(new URL(page.url()).pathname, "/dashboard/sign-in");

      // A member: no team section in the nav, and a 403 page if they go there anyway.
      await page.setViewport({ width: 1280, height: 800 });
      await page.type("#email", member.email);
      await page.type("#password", PASSWORD);
      await follow(page, "button[type=submit]");
      assert.equal(await page.$("nav a[href='/dashboard/team']"), null);
      await snap(page, "keys-member");
      const forbidden = await page.goto(`${base}/dashboard/team`);
      assert.equal(forbidden?.status(), 403);
      await snap(page, "team-forbidden");
    } finally {
      await shutdown();
    }
  },
);
