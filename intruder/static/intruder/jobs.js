// Poll every unfinished job row (tr.job[data-job-url]: templates/researcher/_jobs.html and the
// risk page) and update its progress bar; reload the page once a job ends so its results show.
(function () {
  const rows = Array.from(document.querySelectorAll("tr.job")).filter(r => !r.dataset.finished);
  if (!rows.length) return;
  async function poll() {
    let open = 0;
    for (const row of rows) {
      if (row.dataset.finished) continue;
      try {
        const r = await fetch(row.dataset.jobUrl, {credentials: "same-origin"});
        if (!r.ok) continue;
        const j = await r.json();
        row.querySelector('[data-field="status"]').textContent = j.status;
        const attempt = row.querySelector('[data-field="attempt"]');
        if (attempt) attempt.textContent = j.attempt_label ? ", " + j.attempt_label : "";
        row.querySelector('[data-field="bar"]').style.width = j.progress_pct + "%";
        row.querySelector(".progress")?.setAttribute("aria-valuenow", Math.round(j.progress_pct));
        const counts = j.progress_total ? `${j.progress_done}/${j.progress_total} ` : "";
        row.querySelector('[data-field="message"]').textContent = counts + j.message;
        // The row after a job's row says why it waits (a page may list a job twice).
        const next = row.nextElementSibling;
        const waiting = next && next.classList.contains("job-waiting") ? next : null;
        if (waiting) {
          waiting.querySelector("p").textContent = j.waiting_note;
          waiting.hidden = !j.waiting_note;
        }
        if (j.finished) { row.dataset.finished = "1"; setTimeout(() => location.reload(), 800); }
        else open++;
      } catch (e) { open++; }
    }
    if (open) setTimeout(poll, 1500);
  }
  poll();
})();
