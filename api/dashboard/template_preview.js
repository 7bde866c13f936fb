// The template editor's live preview: the page works without it (its "Preview" button posts the
// form); with it, the draft is posted as the user types and the server's preview fragment, rendered
// by the code that sends, replaces the old one. Served by the service: the CSP allows no inline script.
(() => {
  const form = document.getElementById("template-form");
  const target = document.getElementById("preview");
  if (!form || !target || !form.dataset.preview) return;
  const url = form.dataset.preview;
  const WAIT_MS = 250;
  let timer;
  let sent = 0;

  async function refresh() {
    const mine = ++sent;
    try {
      const res = await fetch(url, {
        method: "POST",
        body: new URLSearchParams(new FormData(form)),
        headers: { "X-Dashboard-Fragment": "preview" },
        credentials: "same-origin",
      });
      // An answer overtaken by a later one is dropped, so that the preview never goes back in time.
      if (!res.ok || mine !== sent) return;
      const html = await res.text();
      if (mine === sent) target.innerHTML = html;
    } catch {
      // The next keystroke tries again; the button still works.
    }
  }

  function later() {
    clearTimeout(timer);
    timer = setTimeout(refresh, WAIT_MS);
  }

  form.addEventListener("input", later);
  form.addEventListener("keyup", later);
  form.addEventListener("change", later);
  form.dataset.live = "on";
})();
