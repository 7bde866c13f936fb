// The live progress of a send on its dashboard page: polls the page's JSON (the same view as the API's
// GET /triggers/{id}) every second while the send runs, and writes the counts into the page.
"use strict";

const FINAL = new Set(["completed", "failed"]);
const POLL_MS = 1000;

function setText(root, selector, text) {
  for (const el of root.querySelectorAll(selector)) el.textContent = String(text);
}

/** A time as the dashboard's pages write it: UTC to the minute. */
function when(iso) {
  return iso ? `${iso.slice(0, 16).replace("T", " ")} UTC` : null;
}

function show(box, view) {
  box.dataset.status = view.status;
  setText(box, "[data-field=status]", view.status);
  if (view.completed_at) setText(box, "[data-field=completed_at]", when(view.completed_at));
  if (FINAL.has(view.status)) { for (const el of box.querySelectorAll("[data-while-running]")) el.hidden = true; }
  for (const [name, value] of Object.entries(view.summary)) setText(box, `[data-count=${name}]`, value);
  const bar = box.querySelector("progress");
  if (bar) {
    const done = view.summary.sent + view.summary.failed + view.summary.filtered;
    bar.max = Math.max(1, view.summary.total_contacts);
    bar.value = FINAL.has(view.status) ? bar.max : done;
  }
  for (const e of view.executions) {
    const row = document.querySelector(`[data-execution="${e.id}"]`);
    if (!row) {
      box.dataset.reload = "true";
      continue;
    }
    setText(row, "[data-field=status]", e.status);
    if (e.completed_at) setText(row, "[data-field=completed_at]", when(e.completed_at));
    for (const name of ["total_contacts", "sent", "failed", "filtered"]) {
      setText(row, `[data-count=${name}]`, e[name]);
    }
  }
}

async function poll(box) {
  while (!FINAL.has(box.dataset.status)) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    try {
      const res = await fetch(box.dataset.src, { headers: { Accept: "application/json" }, credentials: "same-origin" });
      // A session that ended sends the fetch to the sign-in page: so does reloading.
      if (res.redirected) return location.reload();
      if (!res.ok) continue;
      show(box, await res.json());
    } catch {
      // A network blip: the next poll tries again.
    }
  }
  // Executions the page did not list appeared meanwhile: the final page shows them all.
  if (box.dataset.reload === "true") location.reload();
}

const box = document.getElementById("progress");
if (box) poll(box);
