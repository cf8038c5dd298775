// Poll the status of every unfinished job row (tr.job[data-job-url]) and update its progress
// bar; reload the page once a job finishes so its results show.
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
        row.querySelector('[data-field="bar"]').style.width = j.progress_pct + "%";
        row.querySelector('[data-field="message"]').textContent = `${j.progress_done}/${j.progress_total} ${j.message}`;
        if (j.finished) { row.dataset.finished = "1"; setTimeout(() => location.reload(), 800); }
        else open++;
      } catch (e) { open++; }
    }
    if (open) setTimeout(poll, 1500);
  }
  poll();
})();
