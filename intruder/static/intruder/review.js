// Review page: click a highlighted span to edit it in a dialog; select words to mask them.
// Every action is an ordinary form post (the page works without this script, from the table).
(function () {
  const original = document.getElementById("original");
  const dialog = document.getElementById("span-editor");
  if (!original || !dialog) return;
  const text = original.dataset.original;
  const field = (id) => document.getElementById(id);
  let start = 0, end = 0;

  function show() {
    field("ed-start").value = start;
    field("ed-end").value = end;
    field("ed-covered").textContent = text.slice(start, end);
  }
  // Move a boundary to the previous/next word edge, never past the other boundary.
  function step(which, direction) {
    const isWord = (c) => /[\p{L}\p{N}'’-]/u.test(c || "");
    let at = which === "start" ? start : end;
    if (direction < 0) {
      at -= 1;
      while (at > 0 && !isWord(text[at - 1])) at -= 1;
      while (at > 0 && isWord(text[at - 1])) at -= 1;
      if (which === "end") { while (at < end && isWord(text[at])) at += 1; }
    } else {
      while (at < text.length && isWord(text[at])) at += 1;
      while (at < text.length && !isWord(text[at])) at += 1;
      if (which === "end") { while (at < text.length && isWord(text[at])) at += 1; }
    }
    if (which === "start" && at < end) start = Math.max(0, at);
    if (which === "end" && at > start) end = Math.min(text.length, at);
    show();
  }
  original.addEventListener("click", function (event) {
    const span = event.target.closest("a.span");
    if (!span) return;
    event.preventDefault();
    start = Number(span.dataset.start);
    end = Number(span.dataset.end);
    field("ed-index").value = span.dataset.index;
    field("ed-category").value = span.dataset.category;
    show();
    dialog.showModal();
  });
  dialog.querySelectorAll("[data-move]").forEach(function (button) {
    button.addEventListener("click", () => step(button.dataset.move, Number(button.dataset.step)));
  });
  field("ed-close").addEventListener("click", () => dialog.close());

  // Selecting words in the original fills the mask form, with the exact place for "only this".
  const needle = field("needle");
  if (!needle) return;
  function offsetIn(node, offset) {
    const walker = document.createTreeWalker(original, NodeFilter.SHOW_TEXT);
    let total = 0;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      if (n.parentElement.closest("sup")) continue; // placeholder labels are not original text
      if (n === node) return total + offset;
      total += n.textContent.length;
    }
    return -1;
  }
  original.addEventListener("mouseup", function () {
    const selection = window.getSelection();
    const chosen = selection.toString();
    if (!chosen.trim() || selection.rangeCount === 0) return;
    const range = selection.getRangeAt(0);
    let from = offsetIn(range.startContainer, range.startOffset);
    let to = offsetIn(range.endContainer, range.endOffset);
    if (from >= 0 && to > from) {
      while (/\s/.test(text[from])) from += 1;
      while (to > from && /\s/.test(text[to - 1])) to -= 1;
      field("mask-start").value = from;
      field("mask-end").value = to;
      field("mask-one").disabled = false;
    }
    needle.value = chosen.trim();
    needle.focus();
  });
})();
