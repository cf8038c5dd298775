// Fill the review table's guard columns while the guard job runs (risk/templates/risk/_guard_panel.html,
// loaded deferred: it reads the table below it).
// Polls the rows made so far; reloads once the job ends, for its summary line.
(function () {
  const status = document.getElementById("guard-status");
  if (!status || status.dataset.finished) return;
  const cells = (cls) => new Map(
    Array.from(document.querySelectorAll("td." + cls)).map(td => [td.dataset.textId, td]));
  const ranksCells = cells("guard-ranks");
  const wordsCells = cells("guard-words");
  const residualCells = cells("guard-residual");
  function fill(id, row) {
    const ranks = ranksCells.get(id), words = wordsCells.get(id), residual = residualCells.get(id);
    if (!ranks || !words || ranks.dataset.filled) return;
    ranks.textContent = "";
    for (const [attack, before, after] of row.ranks) {
      ranks.append(`${attack} ${before ?? "–"} → ${after ?? "–"}`, document.createElement("br"));
    }
    if (row.flagged) {
      const badge = document.createElement("span");
      badge.className = "badge flag";
      badge.textContent = "ranked better than k-th: " + row.reason;
      ranks.append(badge);
    }
    words.textContent = row.masked_words.length ? row.masked_words.join(", ") : "nothing needed";
    if (residual) {
      // The words the attacks still lean on, each opening the text with it ready to mask.
      residual.textContent = "";
      (row.residual_words || []).forEach((word, i) => {
        if (i) residual.append(", ");
        const link = document.createElement("a");
        link.href = `${row.review_url}?mask=${encodeURIComponent(word)}#mask-form`;
        link.textContent = word;
        residual.append(link);
      });
      if (!(row.residual_words || []).length) {
        const none = document.createElement("span");
        none.className = "muted";
        none.textContent = "none left";
        residual.append(none);
      }
    }
    ranks.dataset.filled = "1";
  }
  async function poll() {
    try {
      const r = await fetch(status.dataset.rowsUrl, {credentials: "same-origin"});
      if (r.ok) {
        const j = await r.json();
        status.querySelector('[data-field="status"]').textContent = j.status;
        status.querySelector('[data-field="progress"]').textContent =
          `${j.progress_done}/${j.progress_total} ${j.message}`;
        for (const [id, row] of Object.entries(j.rows)) fill(id, row);
        if (j.finished) {
          const note = status.querySelector('[data-field="note"]');
          if (note) note.textContent = "· reloading for the summary";
          setTimeout(() => location.reload(), 800);
          return;
        }
      }
    } catch (e) { /* network hiccup: try again */ }
    setTimeout(poll, 2000);
  }
  poll();
})();
