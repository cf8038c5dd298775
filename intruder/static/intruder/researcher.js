// Behaviour shared by the researcher pages, loaded from this site as the
// Content-Security-Policy requires (no inline handlers or scripts; docs/operations.md).
(function () {
  "use strict";

  // <select data-auto-submit>: submit its form on change (the Participants status filter).
  function autoSubmit() {
    for (const field of document.querySelectorAll("[data-auto-submit]")) {
      field.addEventListener("change", function () {
        if (field.form) field.form.submit();
      });
    }
  }

  // The study form shows only the fields that mean something for the chosen kind of study.
  function kindFields() {
    const kind = document.getElementById("id_kind");
    if (!kind || !document.getElementById("study-form")) return;
    function update() {
      for (const box of document.querySelectorAll(".form-field[data-kind]")) {
        const only = box.dataset.kind;
        box.hidden = Boolean(only) && kind.value !== "" && only !== kind.value;
      }
    }
    kind.addEventListener("change", update);
    update();
  }

  // The study list refreshes its figures every 5 seconds from data-progress-url.
  function studyListRefresh() {
    const table = document.querySelector("table#studies[data-progress-url]");
    if (!table) return;
    const url = table.dataset.progressUrl;
    function dash(v) { return v === null || v === undefined ? "–" : v; }
    async function refresh() {
      try {
        const r = await fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}});
        if (!r.ok) return;
        const data = await r.json();
        for (const s of data.studies) {
          const row = table.querySelector(`tr[data-slug="${CSS.escape(s.slug)}"]`);
          if (!row) continue;
          row.querySelector('[data-field="descriptions"]').textContent = s.descriptions;
          if (s.kind === "collection") continue;
          const j = s.judgments_per_text, p = s.participants;
          row.querySelector('[data-field="judgments"]').textContent = `${dash(j.min)} / ${dash(j.median)} / ${j.target}`;
          row.querySelector('[data-field="participants"]').textContent = `${p.started} · ${p.at_debrief} · ${p.completed} · ${p.returned} · ${p.timed_out}`;
        }
        const stamp = document.getElementById("refreshed");
        if (stamp) stamp.textContent = "Last refreshed " + new Date().toLocaleTimeString() + ".";
      } catch (e) { /* keep the last figures on a network hiccup */ }
    }
    setInterval(refresh, 5000);
  }

  function start() {
    autoSubmit();
    kindFields();
    studyListRefresh();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
