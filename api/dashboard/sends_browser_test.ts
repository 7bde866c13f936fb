import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { createService } from "../../main.ts";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import { createContact } from "../../shared/contacts/queries.ts";
import type { Deps } from "../../shared/deps.ts";
import { startFakeResend } from "../../harness/fakes/fake_servers.ts";
import type { Providers } from "../../shared/providers/registry.ts";
import { createResendProvider } from "../../shared/providers/resend.ts";
import { testDeps, testTeam } from "../../shared/testing.ts";
import { startWorker } from "../../worker/queue.ts";
import { PASSWORD, testUser } from "./testing.ts";

const ARTIFACTS = new URL("../../.artifacts/dashboard/", import.meta.url);
const CONTACTS = 300;

async function snap(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname as `${string}.png`, fullPage: true });
}

/** A counter of the progress card, as the page shows it now. */
async function shown(page: Page, name: string): Promise<number> {
  return Number(await page.$eval(`#progress [data-count=${name}]`, (el) => el.textContent));
}

browserTest(
  `in Chromium: a fan-out to ${CONTACTS} contacts, started through the API, counts up to completion on its page`,
  async (browser) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    // Live email goes through the Resend SDK to a fake Resend that holds every email until the test lets
    // it go: the page is opened while the send certainly runs.
    let release!: () => void;
    const held = new Promise<void>((resolve) => release = resolve);
    await using resend = startFakeResend({ apiKey: "re_browser", hold: () => held });
    const base = await testDeps();
    const email = createResendProvider({ apiKey: "re_browser", baseUrl: resend.url });
    const providers: Providers = {
      outbox: base.providers.outbox,
      get: (channel, options) => channel === "email" && !options.sandbox ? email : base.providers.get(channel, options),
    };
    const deps: Deps = { ...base, providers };
    startWorker(deps);
    const app = createService(deps);
    const { team, keys } = await testTeam(deps);
    const owner = await testUser(deps, team.id, "owner");
    for (let i = 0; i < CONTACTS; i += 50) {
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          createContact(deps.sql, team.id, {
            email: `fan.${i + j}.${crypto.randomUUID().slice(0, 8)}@example.com`,
            tags: ["launch"],
          })),
      );
    }
    const { origin, shutdown } = serveOnLoopback(app.fetch);
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(`${origin}/dashboard/sends`);
      await page.type("#email", owner.email);
      await page.type("#password", PASSWORD);
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
      await page.goto(`${origin}/dashboard/sends`);
      assert.match(await page.$eval("main", (el) => el.textContent ?? ""), /No sends yet/);
      await snap(page, "sends-empty");

      const res = await fetch(`${origin}/api/v1/messages/send`, {
        method: "POST",
        headers: { "X-API-Key": keys.live, "Content-Type": "application/json" },
        body: JSON.stringify({ recipient_type: "tag", tag: "launch", subject: "Launch", content: "It is out" }),
      });
      const { trigger_id: id } = await res.json();
      assert.equal(res.status, 201);
      // The worker has reached the provider: the send is running, held there.
      while (resend.requests.length === 0) await new Promise((r) => setTimeout(r, 20));

      await page.goto(`${origin}/dashboard/sends/${id}`);
      const status = () => page.$eval("#progress", (el) => el.getAttribute("data-status"));
      assert.ok(["pending", "processing"].includes((await status())!));
      assert.equal(await shown(page, "sent"), 0);
      await page.evaluate("window.sameDocument = true");
      await snap(page, "send-running");

      release();
      await page.waitForFunction(
        `document.getElementById("progress").dataset.status === "completed"`,
        { timeout: 90_000, polling: 100 },
      );
      // The counters were written by the page's script, in the same document: no reload.
      assert.equal(await page.evaluate("window.sameDocument"), true);
      assert.equal(await shown(page, "total_contacts"), CONTACTS);
      assert.equal(await shown(page, "sent"), CONTACTS);
      assert.equal(await shown(page, "failed"), 0);
      const bar = await page.$eval("#progress-bar", (el) => [el.getAttribute("value"), el.getAttribute("max")]);
      assert.equal(Number(bar[0]), CONTACTS);
      assert.equal(await page.$eval("[data-execution] [data-count=sent]", (el) => el.textContent), String(CONTACTS));
      assert.match(await page.$eval("#progress [data-field=completed_at]", (el) => el.textContent ?? ""), /UTC$/);
      assert.equal(await page.$eval("[data-while-running]", (el) => el.hasAttribute("hidden")), true);
      assert.equal(resend.requests.filter((r) => r.path === "/emails").length, CONTACTS);
      await snap(page, "send-completed");

      await page.goto(`${origin}/dashboard/sends`);
      assert.equal(await page.$eval(`a[href='/dashboard/sends/${id}']`, (el) => el.tagName), "A");
      await snap(page, "sends");
      await page.setViewport({ width: 375, height: 740, isMobile: true });
      await page.goto(`${origin}/dashboard/sends/${id}`);
      assert.equal(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), true);
      await snap(page, "send-phone");
    } finally {
      release();
      await shutdown();
    }
  },
);
