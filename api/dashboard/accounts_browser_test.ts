import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { createService } from "../../main.ts";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import { startFakeTwilio } from "../../harness/fakes/fake_servers.ts";
import { testDeps, testTeam } from "../../shared/testing.ts";
import { PASSWORD, testUser } from "./testing.ts";

const ARTIFACTS = new URL("../../.artifacts/dashboard/", import.meta.url);

async function snap(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname as `${string}.png`, fullPage: true });
}

const text = (page: Page, selector: string) => page.$eval(selector, (el) => el.textContent ?? "");

browserTest(
  "in Chromium: an owner adds a Twilio account, sees it masked, checks it; then changes their password",
  async (browser) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    // Loopback allowed: the fake Twilio listens there.
    const deps = await testDeps({ WEBHOOK_ALLOW_PRIVATE: true });
    const app = createService(deps);
    const { team } = await testTeam(deps);
    const owner = await testUser(deps, team.id, "owner");
    const sid = `AC${crypto.randomUUID().replaceAll("-", "")}`;
    const token = crypto.randomUUID().replaceAll("-", "");
    await using twilio = startFakeTwilio({ accountSid: sid, authToken: token });
    const { origin, shutdown } = serveOnLoopback(app.fetch);
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(`${origin}/dashboard/sign-in`);
      await page.type("#email", owner.email);
      await page.type("#password", PASSWORD);
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);

      await Promise.all([page.waitForNavigation(), page.click("a[href='/dashboard/channel-accounts']")]);
      await snap(page, "channel-accounts-empty");
      await page.select("#sms-provider", "twilio");
      await Promise.all([
        page.waitForNavigation(),
        page.click("form[action='/dashboard/channel-accounts/sms/new'] button"),
      ]);
      await page.type("#cred-account_sid", sid);
      await page.type("#cred-auth_token", token);
      await page.type("#base_url", twilio.url);
      await snap(page, "channel-account-form");
      await Promise.all([page.waitForNavigation(), page.click("main form button[type=submit]")]);

      const section = await text(page, "#sms");
      assert.ok(section.includes(sid));
      assert.ok(section.includes(`****${token.slice(-4)}`));
      assert.ok(!(await page.content()).includes(token), "the token is not in the page");
      await Promise.all([page.waitForNavigation(), page.click("button[aria-label='Check Twilio (1)']")]);
      assert.match(await text(page, "#check-result"), /SMS account 1 \(Twilio\): works/);
      assert.ok(twilio.requests.some((r) => r.path === `/2010-04-01/Accounts/${sid}.json`));
      await snap(page, "channel-accounts-checked");

      await Promise.all([page.waitForNavigation(), page.click("header a[href='/dashboard/account']")]);
      await page.type("#current-password", PASSWORD);
      await page.type("#new-password", "a brand new password 44");
      await Promise.all([page.waitForNavigation(), page.click("form[action='/dashboard/account/password'] button")]);
      assert.match(await text(page, "#account-notice"), /Your password is changed/);
      await snap(page, "account-password-changed");

      await page.setViewport({ width: 375, height: 740, isMobile: true });
      for (
        const [path, name] of [["/dashboard/channel-accounts", "channel-accounts-phone"], [
          "/dashboard/account",
          "account-phone",
        ]]
      ) {
        await page.goto(`${origin}${path}`);
        assert.equal(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), true, path);
        await snap(page, name);
      }
      // Signed out, the new password signs in.
      await page.setViewport({ width: 1280, height: 800 });
      await Promise.all([page.waitForNavigation(), page.click("header form[action='/dashboard/sign-out'] button")]);
      await page.type("#email", owner.email);
      await page.type("#password", "a brand new password 44");
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
      assert.equal(new URL(page.url()).pathname, "/dashboard/keys");
    } finally {
      await shutdown();
    }
  },
);
