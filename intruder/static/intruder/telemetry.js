/* Answer telemetry (docs/participants.md, "What is recorded"): counts and times only, never
 * what is typed or pasted. Posted with the answer in the form's hidden "telemetry" field;
 * the server checks it (intruder/services/telemetry.py) and stores an answer without it all
 * the same. The form's data-telemetry lists the signals the study records. */
(function () {
  "use strict";
  var form = document.querySelector("form[data-telemetry]");
  if (!form || !window.JSON) return;
  var signals = (form.dataset.telemetry || "").split(/\s+/);
  function on(signal) { return signals.indexOf(signal) !== -1; }

  var start = performance.now();
  var t = {
    first_input_ms: null, typing_ms: 0, keystrokes: 0, paste_events: 0, pasted_chars: 0,
    copy_events: 0, copied_chars: 0, focus_losses: 0, away_ms: 0
  };
  // Gaps between keys longer than this are pauses, not typing.
  var TYPING_GAP_MS = 2000;
  var lastKey = null, awaySince = null;

  function now() { return performance.now(); }
  function firstInput() {
    if (t.first_input_ms === null) t.first_input_ms = Math.round(now() - start);
  }
  function isField(el) {
    return el && (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && el.type === "text"));
  }

  form.addEventListener("keydown", function (e) {
    if (!isField(e.target)) return;
    // Characters, deletions and line breaks: what changes an answer by hand.
    if (e.key && (e.key.length === 1 || e.key === "Backspace" || e.key === "Delete" ||
        e.key === "Enter")) {
      firstInput();
      t.keystrokes += 1;
      var at = now();
      if (lastKey !== null && at - lastKey < TYPING_GAP_MS) t.typing_ms += at - lastKey;
      lastKey = at;
    }
  });
  form.addEventListener("paste", function (e) {
    firstInput();
    t.paste_events += 1;
    var data = e.clipboardData && e.clipboardData.getData("text");
    t.pasted_chars += data ? data.length : 0;
  });
  form.addEventListener("input", function (e) {
    // Drag-and-drop and other non-key insertions count as a first input too.
    if (isField(e.target)) firstInput();
  });

  var served = document.getElementById("anon-text");
  document.addEventListener("copy", function () {
    var selection = window.getSelection ? String(window.getSelection()) : "";
    var node = window.getSelection && window.getSelection().anchorNode;
    if (served && node && !served.contains(node) && !served.contains(
        window.getSelection().focusNode)) return;
    t.copy_events += 1;
    t.copied_chars += selection.length;
    var note = document.getElementById("copy-note");
    if (note && served && served.dataset.discourageCopy) note.hidden = false;
  });

  // Away: the tab hidden or the window unfocused, counted once per absence.
  function leave() {
    if (awaySince !== null) return;
    awaySince = now();
    t.focus_losses += 1;
  }
  function back() {
    if (awaySince === null) return;
    t.away_ms += now() - awaySince;
    awaySince = null;
  }
  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") leave(); else if (document.hasFocus()) back();
  });
  window.addEventListener("blur", leave);
  window.addEventListener("focus", back);

  form.addEventListener("submit", function () {
    back();
    var page = Math.round(now() - start);
    var out = { v: 1 };
    if (on("timing")) {
      out.page_ms = page;
      out.first_input_ms = t.first_input_ms === null ? null : Math.min(t.first_input_ms, page);
      out.typing_ms = Math.min(Math.round(t.typing_ms), page);
    }
    if (on("keystrokes")) out.keystrokes = t.keystrokes;
    if (on("paste")) { out.paste_events = t.paste_events; out.pasted_chars = t.pasted_chars; }
    if (on("copy")) { out.copy_events = t.copy_events; out.copied_chars = t.copied_chars; }
    if (on("focus")) { out.focus_losses = t.focus_losses; out.away_ms = Math.min(Math.round(t.away_ms), page); }
    form.elements.telemetry.value = JSON.stringify(out);
  });
})();
