import assert from "node:assert/strict";
import type { Page } from "puppeteer-core";
import { createService } from "../../main.ts";
import { browserTest, serveOnLoopback } from "../../shared/browser_testing.ts";
import type { Deps } from "../../shared/deps.ts";
import { toMicros } from "../../shared/money.ts";
import { testDeps, testTeam } from "../../shared/testing.ts";
import { charge, topUp } from "../../shared/wallet.ts";
import { newEvent, packJobs } from "../../shared/webhook_events.ts";
import { newWebhookSecret } from "../../shared/webhook_signing.ts";
import { deliverWebhooks } from "../../worker/webhooks.ts";
import { createEndpoint } from "../webhooks/queries.ts";
import { PASSWORD, testUser } from "./testing.ts";

const ARTIFACTS = new URL("../../.artifacts/dashboard/", import.meta.url);

async function snap(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname as `${string}.png`, fullPage: true });
}

browserTest(
  "in Chromium: a member adds a sender and verifies a domain by TXT; webhooks and wallet pages, at 1280 and 375 px",
  async (browser) => {
    await Deno.mkdir(ARTIFACTS, { recursive: true });
    const txt = new Map<string, string[]>();
    const base = await testDeps({ RESEND_API_KEY: undefined, WEBHOOK_ALLOW_PRIVATE: true, WEBHOOK_RETRY_SCALE: 1000 });
    const deps: Deps = {
      ...base,
      resolveTxt: (name) =>
        txt.has(name) ? Promise.resolve(txt.get(name)!.map((r) => [r])) : Promise.reject(new Deno.errors.NotFound()),
    };
    const app = createService(deps);
    const { team } = await testTeam(deps);
    const member = await testUser(deps, team.id, "member");
    // A wallet with some history, and an endpoint whose one delivery failed.
    await topUp(deps.sql, team.id, toMicros(25), "First top-up");
    await charge(deps.sql, team.id, toMicros(0.0079), "msg_demo", "SMS to +14155550100");
    const receiver = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      () => new Response(null, { status: 503 }),
    );
    const endpoint = await createEndpoint(deps.sql, team.id, {
      url: `http://127.0.0.1:${receiver.addr.port}/hooks`,
      events: ["message.sent", "message.failed"],
      secret: newWebhookSecret(),
    });
    const event = newEvent("message.sent", { message_id: "msg_demo" }, Date.now());
    await deliverWebhooks(deps, packJobs(team.id, [{ endpoint_id: endpoint.id, event }], 1, Date.now()).jobs[0]);

    const { origin, shutdown } = serveOnLoopback(app.fetch);
    try {
      const page = await browser.newPage();
      await page.setViewport({ width: 1280, height: 800 });
      await page.goto(`${origin}/dashboard/senders`);
      await page.type("#email", member.email);
      await page.type("#password", PASSWORD);
      await Promise.all([page.waitForNavigation(), page.click("button[type=submit]")]);
      await page.goto(`${origin}/dashboard/senders`);
      await snap(page, "senders");

      await page.select("#channel", "email");
      await page.type("#identity-id", "newsletter");
      await page.type("#from", "news@mail.example.org");
      await page.type("#name", "Example News");
      await page.click("#is-default");
      await Promise.all([page.waitForNavigation(), page.click("form[action='/dashboard/senders/identities'] button")]);
      const row = await page.$eval("[data-identity='email/newsletter']", (el) => el.textContent ?? "");
      assert.match(row, /not sendable: mail\.example\.org is not verified/);

      await page.type("#domain", "mail.example.org");
      await Promise.all([page.waitForNavigation(), page.click("form[action='/dashboard/senders/domains'] button")]);
      const token = await page.$eval("#domain-mail-example-org code.wrap", (el) => el.textContent ?? "");
      assert.match(token, /^messaging-verification=/);
      await snap(page, "senders-domain-added");
      txt.set("mail.example.org", [token]);
      await Promise.all([page.waitForNavigation(), page.click("button[aria-label='Check mail.example.org']")]);
      assert.equal(await page.$eval("#domain-mail-example-org h3 .badge", (el) => el.textContent), "verified");
      assert.doesNotMatch(
        await page.$eval("[data-identity='email/newsletter']", (el) => el.textContent ?? ""),
        /not sendable/,
      );
      await snap(page, "senders-domain-verified");

      await page.goto(`${origin}/dashboard/webhooks`);
      await snap(page, "webhooks");
      await Promise.all([page.waitForNavigation(), page.click(`a[href='/dashboard/webhooks/${endpoint.id}']`)]);
      assert.match(await page.$eval("main", (el) => el.textContent ?? ""), /HTTP 503/);
      assert.ok(await page.$(`button[aria-label='Retry ${event.id} now']`));
      await snap(page, "webhook-endpoint");
      await page.goto(`${origin}/dashboard/wallet`);
      assert.equal(await page.$eval("#balance", (el) => el.textContent), "24.9921 USD");
      await snap(page, "wallet");

      await page.setViewport({ width: 375, height: 740, isMobile: true });
      for (
        const [path, name] of [
          ["/dashboard/senders", "senders-phone"],
          [`/dashboard/webhooks/${endpoint.id}`, "webhook-endpoint-phone"],
          ["/dashboard/wallet", "wallet-phone"],
          ["/dashboard/sends", "sends-empty-phone"],
        ]
      ) {
        await page.goto(`${origin}${path}`);
        assert.equal(await page.evaluate("document.documentElement.scrollWidth <= innerWidth"), true, path);
        await snap(page, name);
      }
    } finally {
      await shutdown();
      await receiver.shutdown();
    }
  },
);
