// PSI span annotation page: select text to mark it, pick a category, edit, link, autosave.
//
// Offsets are Python character offsets (Unicode code points), never JavaScript's UTF-16
// units: every string is handled as Array.from(text), so an emoji counts as one character.
// The server snaps spans to whole words and validates them; its answer is the saved truth.
(function () {
  "use strict";
  const config = JSON.parse(document.getElementById("annotation-config").textContent);
  const textBox = document.getElementById("ann-text");
  const statusBox = document.getElementById("save-status");
  const storageKey = "annotation-task-" + config.taskId;
  const csrf = (document.querySelector("input[name=csrfmiddlewaretoken]") || {}).value || "";
  const WORD = /[\p{L}\p{N}_\p{M}]/u;

  let chars = [];             // the text as code points
  let revision = 0;
  let mentions = [];          // {start, end, entity_type, identifier_type, confidential_status, entity, suggestion}
  let suggestions = [];       // {index, start, end, category, entity, decision}
  let rejected = new Set();
  let others = [];
  let selected = null;        // {kind: "mention"|"suggestion", index}
  let pending = null;         // {start, end} from the current text selection
  let changeCounter = 0;      // bumps on every local edit
  let savedCounter = 0;       // the edit count the server has
  let saving = false;
  let saveTimer = null;
  let retryDelay = 2000;
  let conflictState = null;
  // Undo/redo: snapshots of {mentions, rejected}; `current` is the state after the last edit.
  let past = [];
  let future = [];
  let current = null;
  const HISTORY_LIMIT = 200;
  // Keyboard selection, in word indices into `words` (null = none yet).
  let words = [];             // [{start, end}] of every word, in code points
  let caret = null;           // {anchor, focus} word indices

  const categoryColor = {};
  config.categories.forEach((c, i) => {
    categoryColor[c.name] = `hsl(${(i * 47) % 360} 75% 82%)`;
  });

  // ---- state helpers ----------------------------------------------------------------
  function sliceText(start, end) { return chars.slice(start, end).join(""); }
  function defaultIdentifier(category) {
    return config.directByDefault.includes(category) ? "DIRECT" : "QUASI";
  }
  function overlaps(a, b) { return a.start < b.end && b.start < a.end; }
  function usedSuggestions() {
    return new Set(mentions.filter((m) => m.suggestion !== null && m.suggestion !== undefined)
      .map((m) => m.suggestion));
  }
  function openSuggestions() {
    const used = usedSuggestions();
    return suggestions.filter((s) => !used.has(s.index) && !rejected.has(s.index)
      && !mentions.some((m) => overlaps(m, s)));
  }
  function snap(start, end) {
    while (start < end && /\s/u.test(chars[start])) start++;
    while (end > start && /\s/u.test(chars[end - 1])) end--;
    if (start === end) return null;
    while (start > 0 && WORD.test(chars[start - 1]) && WORD.test(chars[start])) start--;
    while (end < chars.length && WORD.test(chars[end]) && WORD.test(chars[end - 1])) end++;
    return {start, end};
  }
  function entityFor(start, end) {
    // Mentions with the same words are the same entity unless the annotator says otherwise.
    const surface = sliceText(start, end).toLowerCase();
    const same = mentions.find((m) => sliceText(m.start, m.end).toLowerCase() === surface);
    if (same) return same.entity;
    let n = 1;
    const keys = new Set(mentions.map((m) => m.entity));
    while (keys.has("e" + n)) n++;
    return "e" + n;
  }

  function snapshot() {
    return JSON.stringify({mentions, rejected: [...rejected]});
  }
  function restore(state) {
    const parsed = JSON.parse(state);
    mentions = parsed.mentions;
    rejected = new Set(parsed.rejected);
    selected = null;
    pending = null;
  }
  function resetHistory() {
    past = [];
    future = [];
    current = snapshot();
    renderHistory();
  }
  function renderHistory() {
    document.getElementById("undo").disabled = !past.length;
    document.getElementById("redo").disabled = !future.length;
  }
  // Undo and redo: take the last state of one stack, keeping the present one on the other.
  function travel(from, to, hint) {
    if (!from.length) return;
    to.push(snapshot());
    restore(from.pop());
    current = snapshot();
    persist();
    statusHint(hint);
  }
  function undo() { travel(past, future, "Undone"); }
  function redo() { travel(future, past, "Redone"); }
  function findWords() {
    words = [];
    let start = null;
    chars.forEach((c, i) => {
      if (WORD.test(c)) { if (start === null) start = i; }
      else if (start !== null) { words.push({start, end: i}); start = null; }
    });
    if (start !== null) words.push({start, end: chars.length});
  }

  // ---- rendering ----------------------------------------------------------------------
  function render() {
    const marks = mentions.map((m, i) => ({...m, kind: "mention", index: i, category: m.entity_type}))
      .concat(openSuggestions().map((s) => ({...s, kind: "suggestion"})))
      .sort((a, b) => a.start - b.start || b.end - a.end);
    const selectedEntity = selected && selected.kind === "mention" ? mentions[selected.index].entity : null;
    const fragment = document.createDocumentFragment();
    let cursor = 0;
    for (const mark of marks) {
      if (mark.start < cursor) continue; // overlapping suggestion: hidden behind the first
      if (mark.start > cursor) fragment.append(document.createTextNode(sliceText(cursor, mark.start)));
      const el = document.createElement("span");
      el.className = "mark " + mark.kind;
      el.dataset.kind = mark.kind;
      el.dataset.index = mark.index;
      el.dataset.tag = mark.category + (mark.kind === "mention" && mark.identifier_type === "DIRECT" ? " ●" : "");
      el.style.background = categoryColor[mark.category] || "#ddd";
      el.textContent = sliceText(mark.start, mark.end);
      el.title = mark.kind === "suggestion" ? `Suggestion: ${mark.category}` :
        `${mark.category} · ${mark.identifier_type} · entity ${mark.entity}`;
      if (selected && selected.kind === mark.kind && selected.index === mark.index) el.classList.add("selected");
      else if (selectedEntity && mark.kind === "mention" && mark.entity === selectedEntity) el.classList.add("linked");
      fragment.append(el);
      cursor = mark.end;
    }
    if (cursor < chars.length) fragment.append(document.createTextNode(sliceText(cursor, chars.length)));
    textBox.replaceChildren(fragment);
    renderPanel();
    renderAcceptCategories();
  }

  function option(value, label, chosen) {
    const o = document.createElement("option");
    o.value = value; o.textContent = label; o.selected = value === chosen;
    return o;
  }

  function renderPanel() {
    const panel = document.getElementById("panel-selected");
    const undecided = openSuggestions().length;
    document.getElementById("pending-note").textContent =
      undecided ? `${undecided} suggestion(s) not decided yet (undecided ones are not kept).` : "";
    if (!selected) { panel.hidden = true; return; }
    panel.hidden = false;
    const isMention = selected.kind === "mention";
    const item = isMention ? mentions[selected.index] : suggestions.find((s) => s.index === selected.index);
    if (!item) { selected = null; panel.hidden = true; return; }
    document.getElementById("selected-title").textContent = isMention ? item.entity_type : `Suggestion: ${item.category}`;
    document.getElementById("selected-text").textContent = sliceText(item.start, item.end);
    document.getElementById("suggestion-actions").hidden = isMention;
    document.getElementById("mention-fields").hidden = !isMention;
    if (!isMention) return;
    const identifier = document.getElementById("field-identifier");
    identifier.replaceChildren(...config.identifierTypes.map((t) => option(t, t, item.identifier_type)));
    const confidential = document.getElementById("field-confidential");
    confidential.replaceChildren(...config.confidential.map((t) => option(t, t, item.confidential_status)));
    const entity = document.getElementById("field-entity");
    const entities = new Map();
    for (const m of mentions) {
      if (!entities.has(m.entity)) entities.set(m.entity, {text: sliceText(m.start, m.end), n: 0});
      entities.get(m.entity).n++;
    }
    const options = [...entities.entries()].map(([key, e]) =>
      option(key, `${key}: “${e.text}” (${e.n} mention${e.n > 1 ? "s" : ""})`, item.entity));
    options.push(option("__new__", "+ new entity", ""));
    entity.replaceChildren(...options);
  }

  function renderCategories() {
    const box = document.getElementById("category-buttons");
    box.replaceChildren(...config.categories.map((c) => {
      const b = document.createElement("button");
      b.type = "button";
      b.dataset.category = c.name;
      b.style.background = categoryColor[c.name];
      b.innerHTML = "";
      b.append(document.createTextNode(c.name + " "));
      if (c.key) { const k = document.createElement("kbd"); k.textContent = c.key; b.append(k); }
      b.addEventListener("mousedown", (e) => e.preventDefault()); // keep the text selection
      b.addEventListener("click", () => chooseCategory(c.name));
      return b;
    }));
  }

  function renderOthers() {
    const box = document.getElementById("panel-others");
    if (!others.length) { box.hidden = true; return; }
    box.hidden = false;
    const list = document.getElementById("others-list");
    list.replaceChildren(...others.flatMap((o) => o.mentions.map((m) => {
      const li = document.createElement("li");
      li.textContent = `${o.annotator}: “${sliceText(m.start, m.end)}” ${m.entity_type}`;
      return li;
    })));
  }

  // ---- editing ------------------------------------------------------------------------
  function changed() {
    if (current !== null && current !== snapshot()) {
      past.push(current);
      if (past.length > HISTORY_LIMIT) past.shift();
      future = [];
    }
    current = snapshot();
    persist();
  }

  function persist() {
    changeCounter++;
    localStorage.setItem(storageKey, JSON.stringify({base: revision, mentions, rejected: [...rejected]}));
    render();
    renderHistory();
    scheduleSave(400);
  }

  function addFromSuggestion(s, category) {
    const chosen = category || s.category;
    mentions.push({start: s.start, end: s.end, entity_type: chosen, identifier_type: defaultIdentifier(chosen),
      confidential_status: "NOT_CONFIDENTIAL", entity: s.entity, suggestion: s.index});
  }

  // Accept every open suggestion (of one category, or all); one undo step takes them back.
  function acceptAll(category) {
    const chosen = openSuggestions().filter((s) => !category || s.category === category)
      .sort((a, b) => a.start - b.start);
    const taken = [];
    for (const s of chosen) {
      if (taken.some((t) => overlaps(t, s))) continue; // overlapping suggestions: the first wins
      addFromSuggestion(s, null);
      taken.push(s);
    }
    if (!taken.length) { flash(category ? `No open ${category} suggestion.` : "No open suggestion."); return; }
    mentions.sort((a, b) => a.start - b.start);
    selected = null;
    changed();
    statusHint(`Accepted ${taken.length} suggestion${taken.length > 1 ? "s" : ""}`);
    // The button is now disabled (nothing left to accept): keep focus in the work, not on
    // the page body.
    document.getElementById("ann-text").focus({preventScroll: true});
  }

  function renderAcceptCategories() {
    const box = document.getElementById("accept-category");
    const open = new Set(openSuggestions().map((s) => s.category));
    const keep = box.value;
    box.replaceChildren(...config.categories.filter((c) => open.has(c.name))
      .map((c) => option(c.name, c.name, keep)));
    const none = !open.size;
    box.disabled = none;
    document.getElementById("accept-all").disabled = none;
    document.getElementById("accept-all-category").disabled = none;
  }

  function chooseCategory(name) {
    if (pending) {
      const span = pending;
      if (mentions.some((m) => overlaps(m, span))) {
        flash("That text overlaps a mark; delete or edit the mark first.");
        return;
      }
      mentions.push({start: span.start, end: span.end, entity_type: name,
        identifier_type: defaultIdentifier(name), confidential_status: "NOT_CONFIDENTIAL",
        entity: entityFor(span.start, span.end), suggestion: null});
      mentions.sort((a, b) => a.start - b.start);
      pending = null;
      caret = null;
      window.getSelection().removeAllRanges();
      selected = {kind: "mention", index: mentions.findIndex((m) => m.start === span.start && m.end === span.end)};
      changed();
    } else if (selected && selected.kind === "mention") {
      const m = mentions[selected.index];
      m.entity_type = name;
      m.identifier_type = m.identifier_type || defaultIdentifier(name);
      changed();
    } else if (selected && selected.kind === "suggestion") {
      acceptSuggestion(name);
    }
  }

  function acceptSuggestion(category) {
    const s = suggestions.find((x) => x.index === selected.index);
    if (!s) return;
    addFromSuggestion(s, category);
    mentions.sort((a, b) => a.start - b.start);
    selected = {kind: "mention", index: mentions.findIndex((m) => m.suggestion === s.index)};
    changed();
  }

  function rejectSuggestion() {
    rejected.add(selected.index);
    selected = null;
    changed();
  }

  function deleteMention() {
    const m = mentions[selected.index];
    // Deleting an accepted suggestion rejects it, so the decision is recorded.
    if (m.suggestion !== null && m.suggestion !== undefined) rejected.add(m.suggestion);
    mentions.splice(selected.index, 1);
    selected = null;
    changed();
  }

  function flash(message) {
    statusBox.textContent = message;
    statusBox.classList.add("error");
    setTimeout(updateStatus, 2500);
  }

  // ---- keyboard-only selection and editing ------------------------------------------
  // Return the DOM (text node, UTF-16 offset) at code point `offset` of the text box.
  function domPoint(offset) {
    const walker = document.createTreeWalker(textBox, NodeFilter.SHOW_TEXT);
    let seen = 0, node = null, last = null;
    while ((node = walker.nextNode())) {
      const points = Array.from(node.textContent);
      if (seen + points.length >= offset) {
        return [node, points.slice(0, offset - seen).join("").length];
      }
      seen += points.length;
      last = node;
    }
    return last ? [last, last.textContent.length] : [textBox, 0];
  }

  function showCaret() {
    const from = Math.min(caret.anchor, caret.focus), to = Math.max(caret.anchor, caret.focus);
    const span = {start: words[from].start, end: words[to].end};
    const range = document.createRange();
    range.setStart(...domPoint(span.start));
    range.setEnd(...domPoint(span.end));
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
    pending = span;
    selected = null;
    renderPanel();
    statusHint(`Selected “${sliceText(span.start, span.end)}”: choose a category`);
  }

  function wordAt(offset) {
    const i = words.findIndex((w) => w.end > offset);
    return i < 0 ? words.length - 1 : i;
  }

  function moveCaret(step, extend) {
    if (!words.length) return;
    if (caret === null) {
      const start = pending ? wordAt(pending.start) : (step > 0 ? -1 : words.length);
      caret = {anchor: Math.max(start, 0), focus: start};
    }
    const focus = Math.min(Math.max(caret.focus + step, 0), words.length - 1);
    caret = extend ? {anchor: caret.anchor, focus} : {anchor: focus, focus};
    showCaret();
  }

  // Move the selected mention's end by one word (Shift+arrows); never below one word.
  function resizeMention(step) {
    const m = mentions[selected.index];
    const last = wordAt(m.end - 1);
    const target = Math.min(Math.max(last + step, wordAt(m.start)), words.length - 1);
    const end = words[target].end;
    if (end === m.end) return;
    if (mentions.some((o, i) => i !== selected.index && overlaps(o, {start: m.start, end}))) {
      flash("That would overlap another mark.");
      return;
    }
    m.end = end;
    changed();
  }

  function marksInOrder() {
    return mentions.map((m, i) => ({kind: "mention", index: i, start: m.start}))
      .concat(openSuggestions().map((s) => ({kind: "suggestion", index: s.index, start: s.start})))
      .sort((a, b) => a.start - b.start);
  }

  function stepMark(step) {
    const marks = marksInOrder();
    if (!marks.length) return;
    let at = selected ? marks.findIndex((m) => m.kind === selected.kind && m.index === selected.index) : -1;
    at = at < 0 ? (step > 0 ? 0 : marks.length - 1) : (at + step + marks.length) % marks.length;
    selected = {kind: marks[at].kind, index: marks[at].index};
    pending = null;
    caret = null;
    window.getSelection().removeAllRanges();
    render();
    const item = selected.kind === "mention" ? mentions[selected.index] : suggestions.find((s) => s.index === selected.index);
    statusHint(`${selected.kind === "mention" ? item.entity_type : "Suggestion: " + item.category}: “${sliceText(item.start, item.end)}”`);
  }

  // ---- selection ----------------------------------------------------------------------
  function offsetOf(node, offset) {
    const range = document.createRange();
    range.setStart(textBox, 0);
    range.setEnd(node, offset);
    return Array.from(range.toString()).length;
  }

  function readSelection() {
    const selection = window.getSelection();
    if (!selection.rangeCount || selection.isCollapsed) { pending = null; return; }
    const range = selection.getRangeAt(0);
    if (!textBox.contains(range.startContainer) || !textBox.contains(range.endContainer)) return;
    const start = offsetOf(range.startContainer, range.startOffset);
    const end = offsetOf(range.endContainer, range.endOffset);
    pending = snap(Math.min(start, end), Math.max(start, end));
    if (pending && caret !== null) {
      // A keyboard selection reads back as itself; a mouse one drops the keyboard caret.
      const from = Math.min(caret.anchor, caret.focus), to = Math.max(caret.anchor, caret.focus);
      if (words[from].start !== pending.start || words[to].end !== pending.end) caret = null;
    }
    if (pending) { selected = null; renderPanel(); statusHint(`Selected “${sliceText(pending.start, pending.end)}”: choose a category`); }
  }

  function statusHint(text) { statusBox.textContent = text; statusBox.classList.remove("error"); }

  textBox.addEventListener("mouseup", () => setTimeout(readSelection, 0));
  textBox.addEventListener("touchend", () => setTimeout(readSelection, 50));
  document.addEventListener("selectionchange", () => {
    const selection = window.getSelection();
    if (selection.rangeCount && !selection.isCollapsed && textBox.contains(selection.anchorNode)) {
      clearTimeout(readSelection.timer);
      readSelection.timer = setTimeout(readSelection, 300);
    }
  });
  textBox.addEventListener("click", (event) => {
    const mark = event.target.closest(".mark");
    if (!mark || !window.getSelection().isCollapsed) return;
    pending = null;
    selected = {kind: mark.dataset.kind, index: Number(mark.dataset.index)};
    render();
  });

  document.getElementById("accept-suggestion").addEventListener("click", () => acceptSuggestion(null));
  document.getElementById("undo").addEventListener("click", undo);
  document.getElementById("redo").addEventListener("click", redo);
  document.getElementById("accept-all").addEventListener("click", () => acceptAll(null));
  document.getElementById("accept-all-category").addEventListener("click", () =>
    acceptAll(document.getElementById("accept-category").value));
  document.getElementById("reject-suggestion").addEventListener("click", rejectSuggestion);
  document.getElementById("delete-mention").addEventListener("click", deleteMention);
  document.getElementById("field-identifier").addEventListener("change", (e) => {
    mentions[selected.index].identifier_type = e.target.value; changed();
  });
  document.getElementById("field-confidential").addEventListener("change", (e) => {
    mentions[selected.index].confidential_status = e.target.value; changed();
  });
  document.getElementById("field-entity").addEventListener("change", (e) => {
    const m = mentions[selected.index];
    if (e.target.value === "__new__") {
      const keys = new Set(mentions.map((x) => x.entity));
      let n = 1; while (keys.has("e" + n)) n++;
      m.entity = "e" + n;
    } else {
      m.entity = e.target.value;
    }
    changed();
  });

  document.addEventListener("keydown", (event) => {
    if (event.target.closest("select, input, textarea")) return;
    const key = event.key.toLowerCase();
    if ((event.ctrlKey || event.metaKey) && !event.altKey && (key === "z" || key === "y")) {
      event.preventDefault();
      if (key === "y" || event.shiftKey) redo(); else undo();
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    if (event.key === "ArrowRight" || event.key === "ArrowLeft") {
      const step = event.key === "ArrowRight" ? 1 : -1;
      if (selected && selected.kind === "mention" && event.shiftKey) { event.preventDefault(); resizeMention(step); return; }
      if (event.target === textBox || caret !== null) { event.preventDefault(); moveCaret(step, event.shiftKey); return; }
    }
    if (event.key === "]" || event.key === "[") { event.preventDefault(); stepMark(event.key === "]" ? 1 : -1); return; }
    const category = config.categories.find((c) => c.key === key);
    // A key pressed before the mouseup/selectionchange timers fire still sees the selection.
    if (category && !pending) readSelection();
    if (category && (pending || selected)) { event.preventDefault(); chooseCategory(category.name); return; }
    if (!selected) return;
    if (selected.kind === "suggestion" && event.key === "Enter") { event.preventDefault(); acceptSuggestion(null); }
    else if (selected.kind === "suggestion" && key === "x") { event.preventDefault(); rejectSuggestion(); }
    else if (selected.kind === "mention" && (event.key === "Delete" || event.key === "Backspace")) { event.preventDefault(); deleteMention(); }
    else if (event.key === "Escape") { selected = null; render(); }
  });

  // ---- saving -------------------------------------------------------------------------
  function updateStatus() {
    statusBox.classList.remove("error");
    if (conflictState) { statusBox.textContent = "Conflict: not saved"; statusBox.classList.add("error"); }
    else if (saving) statusBox.textContent = "Saving…";
    else if (changeCounter !== savedCounter) statusBox.textContent = "Unsaved changes";
    else statusBox.textContent = "All changes saved";
  }

  function scheduleSave(delay) {
    clearTimeout(saveTimer);
    saveTimer = setTimeout(save, delay);
    updateStatus();
  }

  function adopt(state) {
    revision = state.task.revision;
    mentions = state.mentions.map((m) => ({...m}));
    suggestions = state.suggestions;
    rejected = new Set(state.suggestions.filter((s) => s.decision === "rejected").map((s) => s.index));
    others = state.others || [];
    chars = Array.from(state.document.text);
    findWords();
  }

  async function save() {
    if (saving || conflictState || changeCounter === savedCounter) { updateStatus(); return; }
    saving = true;
    updateStatus();
    const sentCounter = changeCounter;
    const body = JSON.stringify({revision, mentions, rejected: [...rejected]});
    try {
      const response = await fetch(config.api, {
        method: "PUT", credentials: "same-origin", body,
        headers: {"Content-Type": "application/json", "X-CSRFToken": csrf, "Accept": "application/json"},
      });
      if (response.status === 409) {
        conflictState = (await response.json()).current;
        document.getElementById("conflict").hidden = false;
      } else if (!response.ok) {
        const detail = (await response.json().catch(() => ({}))).detail || response.statusText;
        saving = false;
        flash("Not saved: " + detail);
        return;
      } else {
        const state = await response.json();
        savedCounter = sentCounter;
        retryDelay = 2000;
        if (changeCounter === sentCounter) {
          adopt(state);            // the server's snapped offsets and edit types
          current = snapshot();    // undo goes back from the saved state, not a pre-snap one
          localStorage.removeItem(storageKey);
          render();
        } else {
          revision = state.task.revision;
        }
      }
    } catch (error) {
      saving = false;
      statusBox.textContent = "Offline: your changes are kept in this browser; retrying…";
      statusBox.classList.add("error");
      setTimeout(save, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 30000);
      return;
    }
    saving = false;
    updateStatus();
    if (changeCounter !== savedCounter && !conflictState) scheduleSave(0);
  }

  document.getElementById("take-theirs").addEventListener("click", () => {
    adopt(conflictState);
    resetHistory();
    conflictState = null;
    savedCounter = changeCounter;
    localStorage.removeItem(storageKey);
    document.getElementById("conflict").hidden = true;
    render();
    updateStatus();
  });
  document.getElementById("keep-mine").addEventListener("click", () => {
    revision = conflictState.task.revision;
    conflictState = null;
    document.getElementById("conflict").hidden = true;
    scheduleSave(0);
  });

  const submitForm = document.getElementById("submit-form");
  submitForm.addEventListener("submit", async (event) => {
    // Undecided suggestions are dropped on submit: ask first, once per click.
    const undecided = openSuggestions().length;
    if (undecided) {
      const go = window.confirm(`${undecided} suggestion${undecided > 1 ? "s are" : " is"} not ` +
        "decided yet; undecided suggestions are not kept. Submit this text anyway?");
      if (!go) {
        event.preventDefault();
        document.getElementById("ann-text").focus({preventScroll: true});
        return;
      }
    }
    if (changeCounter === savedCounter && !saving) return;
    event.preventDefault();
    await save();
    const wait = setInterval(() => {
      if (!saving && changeCounter === savedCounter && !conflictState) {
        clearInterval(wait);
        submitForm.submit();
      }
    }, 200);
  });
  window.addEventListener("beforeunload", (event) => {
    if (changeCounter !== savedCounter) { event.preventDefault(); event.returnValue = ""; }
  });

  // ---- start --------------------------------------------------------------------------
  async function load() {
    const response = await fetch(config.api, {credentials: "same-origin", headers: {"Accept": "application/json"}});
    if (!response.ok) { flash("Could not load the text; please reload."); return; }
    const state = await response.json();
    adopt(state);
    const backup = JSON.parse(localStorage.getItem(storageKey) || "null");
    if (backup && backup.base === revision) {
      mentions = backup.mentions;            // unsaved work from a lost connection or a crash
      rejected = new Set(backup.rejected);
      changeCounter++;
      scheduleSave(0);
    } else if (backup && backup.base < revision) {
      conflictState = state;                 // saved elsewhere since: let the annotator choose
      mentions = backup.mentions;
      rejected = new Set(backup.rejected);
      changeCounter++;
      document.getElementById("conflict").hidden = false;
    }
    renderCategories();
    renderOthers();
    resetHistory();
    render();
    updateStatus();
    // A new text (after "Done: next text") starts with focus in the text, not the body.
    document.getElementById("ann-text").focus({preventScroll: true});
  }
  load();
})();
