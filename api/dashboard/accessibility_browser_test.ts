import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import { channelAccountsKey, putChannelAccounts } from "../../shared/channel_accounts.ts";
import { dashboardFixture, PASSWORD } from "./testing.ts";

/**
 * What a screen reader and a keyboard need of a page, checked in the page (as text: a DOM type
 * library here would change the type check of the whole project): the language; one h1; a label
 * for every form control; a name for every button and link; text at WCAG AA contrast against the
 * background it is drawn on (4.5:1, 3:1 for large text). Answers what fails, one line each.
 */
const AUDIT = `(() => {
  const problems = [];
  const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== "hidden";
  const describe = (el) => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (el.getAttribute("name") ? "[name=" + el.getAttribute("name") + "]" : "");
  if (!document.documentElement.lang) problems.push("html has no lang");
  const h1s = [...document.querySelectorAll("h1")].filter(visible);
  if (h1s.length !== 1) problems.push(h1s.length + " visible h1");
  for (const el of document.querySelectorAll("input:not([type=hidden]), select, textarea")) {
    if (!visible(el)) continue;
    const named = el.labels?.length || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby");
    if (!named) problems.push("no label: " + describe(el));
  }
  for (const el of document.querySelectorAll("button, a[href]")) {
    if (!visible(el)) continue;
    const name = (el.getAttribute("aria-label") || el.textContent || el.getAttribute("title") || "").trim();
    if (!name) problems.push("no accessible name: " + describe(el));
  }
  const rgb = (value) => (value.match(/[\\d.]+/g) || []).map(Number);
  const luminance = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const background = (el) => {
    for (let e = el; e; e = e.parentElement) {
      const c = rgb(getComputedStyle(e).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] > 0.5)) return c.slice(0, 3);
    }
    return [255, 255, 255];
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const seen = new Set();
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || seen.has(el) || !visible(el)) continue;
    seen.add(el);
    const style = getComputedStyle(el);
    const fg = rgb(style.color).slice(0, 3);
    const [l1, l2] = [luminance(fg), luminance(background(el))].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) {
      problems.push("contrast " + ratio.toFixed(2) + ": " + describe(el) + " '" + node.textContent.trim().slice(0, 30) + "'");
    }
  }
  return problems;
})()`;

async function audit(page: Page): Promise<string[]> {
  return await page.evaluate(AUDIT) as string[];
}

browserTest(
  "in Chromium: every dashboard page has its language, one h1, labelled controls, named buttons and links, and AA contrast",
  async (browser) => {
    const { app, owner, deps, team } = await dashboardFixture();
    // An account of its own, so that the channel accounts page shows its per-channel controls too.
    const key = await channelAccountsKey(deps.config.CHANNEL_ACCOUNTS_KEY);
    await putChannelAccounts(deps.sql, key, { teamId: team.id, channel: "sms", failoverOnTimeout: false }, [
      { provider: "twilio", credentials: { account_sid: `AC${"1".repeat(32)}`, auth_token: "f".repeat(32) } },
    ]);
    const { origin: base, shutdown } = serveOnLoopback(app.fetch);
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(`${base}/dashboard/sign-in`);
      const problems: string[] = (await audit(page)).map((p) => `/dashboard/sign-in: ${p}`);
      await page.type("#email", owner.email);
      await page.type("#password", PASSWORD);
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);

      const sections = await page.evaluate(
        `[...document.querySelectorAll("nav a[href^='/dashboard']")].map((a) => a.getAttribute("href"))`,
      ) as string[];
      assert.ok(sections.length >= 8, `the navigation lists the pages (${sections.join(", ")})`);
      for (const path of new Set([...sections, "/dashboard/account"])) {
        const response = await page.goto(`${base}${path}`);
        assert.equal(response?.status(), 200, path);
        problems.push(...(await audit(page)).map((p) => `${path}: ${p}`));
        if (path === "/dashboard/channel-accounts") {
          assert.ok(await page.$("form[action$='/sms/failover-on-timeout'] button"), "the failover control is audited");
        }
      }
      assert.deepEqual(problems, []);
    } finally {
      await shutdown();
    }
  },
);
