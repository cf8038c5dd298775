/* Answer telemetry (docs/participants.md, "What is recorded"): counts and times only, never
 * what is typed or pasted. Posted with the answer in the form's hidden "telemetry" field,
 * and on leaving the page (a beacon) so that a reload adds to the text's totals instead of
 * starting them again. It names the page view the server served (the form's data-view); the
 * server checks it against its own record (intruder/evidence/page_views.py) and stores an
 * answer without it all the same. The form's data-telemetry lists the signals the study
 * records.
 *
 * Typing is counted from the browser's trusted input events (`input`/`beforeinput` with
 * their inputType), not from key codes: phone keyboards, swipe typing and IMEs report their
 * keys as "Unidentified" but their text through input events. Per answer field it counts
 * the characters typed, pasted or dropped, and changes no trusted event made (a script). */
(function () {
  "use strict";

  // The hidden canary (intruder/evidence/canary.py): the page carries it encoded; it goes
  // into the text after the first sentence, so that a copy of any stretch of it carries it.
  var served = document.getElementById("anon-text");
  if (served && served.dataset.c && window.atob && window.TextDecoder) {
    try {
      var bytes = Uint8Array.from(atob(served.dataset.c), function (c) {
        return c.charCodeAt(0) ^ 0x5a;
      });
      var span = document.createElement("span");
      span.className = "canary";
      span.setAttribute("aria-hidden", "true");
      span.textContent = new TextDecoder().decode(bytes);
      var node = served.firstChild, at = -1;
      while (node && at === -1) {
        if (node.nodeType === 3) at = node.data.indexOf(". ");
        if (at === -1) node = node.nextSibling;
      }
      if (node && at !== -1) served.insertBefore(span, node.splitText(at + 2));
      else served.appendChild(span);
    } catch (e) { /* no canary rather than a broken page */ }
    served.removeAttribute("data-c");
  }

  var form = document.querySelector("form[data-telemetry]");
  if (!form || !window.JSON) return;
  var signals = (form.dataset.telemetry || "").split(/\s+/);
  function on(signal) { return signals.indexOf(signal) !== -1; }

  var t = {
    first_input_ms: null, typing_ms: 0, keystrokes: 0, paste_events: 0, pasted_chars: 0,
    copy_events: 0, copied_chars: 0, focus_losses: 0
  };
  // Gaps between input events longer than this are pauses, not typing.
  var TYPING_GAP_MS = 2000;
  var lastInput = null, awaySince = null, submitted = false;

  // The page's time counts from the navigation's start, as the server's from serving it.
  function now() { return performance.now(); }
  function firstInput() {
    if (t.first_input_ms === null) t.first_input_ms = Math.round(now());
  }
  function isField(el) {
    return el && (el.tagName === "TEXTAREA" || (el.tagName === "INPUT" && el.type === "text"));
  }

  var fields = {};
  Array.prototype.forEach.call(form.elements, function (el) {
    if (isField(el) && el.name) {
      // What the page starts with is the participant's own earlier answer (a rejected post
      // shown again): "restored", like a writer's draft the page puts back.
      fields[el.name] = {
        el: el, typed: 0, pasted: 0, untrusted: 0, largest: 0, restored: el.value.length,
        seen: el.value
      };
    }
  });
  function stateOf(el) { return isField(el) && el.name ? fields[el.name] : null; }
  // A value that differs from the last one a trusted input event left was set by a script.
  function checkUnseen(st) {
    if (st.el.value !== st.seen) { st.untrusted += 1; st.seen = st.el.value; }
  }

  form.addEventListener("intruder-restored", function (e) {
    var st = stateOf(e.target);
    if (!st) return;
    st.restored += Math.max(0, st.el.value.length - st.seen.length);
    st.seen = st.el.value;
  });
  form.addEventListener("beforeinput", function (e) {
    var st = stateOf(e.target);
    if (st && e.isTrusted) checkUnseen(st);
  });
  form.addEventListener("input", function (e) {
    var st = stateOf(e.target);
    if (!st) return;
    if (!e.isTrusted) { st.untrusted += 1; st.seen = st.el.value; return; }
    var delta = st.el.value.length - st.seen.length;
    var type = e.inputType || "";
    firstInput();
    if (/^insertFrom(Paste|Drop)/.test(type)) {
      st.pasted += Math.max(0, delta);
      if (type.indexOf("Drop") !== -1) { t.paste_events += 1; t.pasted_chars += Math.max(0, delta); }
    } else {
      // Keys, phone keyboards (composition, suggestions), autocorrect, undo, deletions.
      if (delta > 0) st.typed += delta;
      // One event that adds many characters outside an IME's composition: execCommand
      // ("insertText") or an automation's fill() inserting a whole answer. The server
      // compares the largest with the study's rule (intruder/evidence/plausibility.py).
      if (delta > st.largest && !e.isComposing && type.indexOf("Composition") === -1) {
        st.largest = delta;
      }
      t.keystrokes += 1;
      var at = now();
      if (lastInput !== null && at - lastInput < TYPING_GAP_MS) t.typing_ms += at - lastInput;
      lastInput = at;
    }
    st.seen = st.el.value;
  });
  form.addEventListener("paste", function (e) {
    firstInput();
    t.paste_events += 1;
    var data = e.clipboardData && e.clipboardData.getData("text");
    t.pasted_chars += data ? data.length : 0;
  });

  // Copies of anything on the page but the participant's own answer: a drag selection of
  // the text, a triple click, or Ctrl+A (which selects the whole page, canary included).
  document.addEventListener("copy", function (e) {
    if (isField(e.target)) return;
    var selection = window.getSelection ? String(window.getSelection()) : "";
    t.copy_events += 1;
    t.copied_chars += selection.length;
    var note = document.getElementById("copy-note");
    if (note && served && served.dataset.discourageCopy) note.hidden = false;
  });

  // Away: the tab hidden or the window unfocused, counted once per absence. Each absence is
  // kept as [start, end] on the page's clock, so that the server can see when another tab
  // of the same page was in front meanwhile (intruder/evidence/page_views.py). Beyond
  // MAX_ABSENCES the two closest are joined (the gap counts as away), as the server does.
  var MAX_ABSENCES = 20;
  var absences = [];
  function leave() {
    if (awaySince !== null) return;
    awaySince = now();
    t.focus_losses += 1;
  }
  function capped(list) {
    while (list.length > MAX_ABSENCES) {
      var best = 0;
      for (var i = 1; i < list.length - 1; i++) {
        if (list[i + 1][0] - list[i][1] < list[best + 1][0] - list[best][1]) best = i;
      }
      list.splice(best, 2, [list[best][0], list[best + 1][1]]);
    }
    return list;
  }
  function back() {
    if (awaySince === null) return;
    absences = capped(absences.concat([[awaySince, now()]]));
    awaySince = null;
  }

  function report() {
    var page = Math.round(now());
    var out = { v: 2 };
    if (form.dataset.view) out.view = form.dataset.view;
    if (on("timing")) {
      out.page_ms = page;
      out.first_input_ms = t.first_input_ms === null ? null : Math.min(t.first_input_ms, page);
      out.typing_ms = Math.min(Math.round(t.typing_ms), page);
    }
    if (on("keystrokes")) {
      out.keystrokes = t.keystrokes;
      out.fields = {};
      Object.keys(fields).forEach(function (name) {
        var st = fields[name];
        checkUnseen(st);
        out.fields[name] = {
          typed: st.typed, pasted: st.pasted, untrusted: st.untrusted, restored: st.restored,
          largest: st.largest
        };
      });
    }
    if (on("paste")) { out.paste_events = t.paste_events; out.pasted_chars = t.pasted_chars; }
    if (on("copy")) { out.copy_events = t.copy_events; out.copied_chars = t.copied_chars; }
    if (on("focus")) {
      var list = awaySince === null ? absences : capped(absences.concat([[awaySince, now()]]));
      // Whole ms, within the page's time, the ongoing absence included.
      out.absences = list.map(function (a) {
        var end = Math.min(Math.round(a[1]), page);
        return [Math.min(Math.round(a[0]), end), end];
      });
      out.focus_losses = t.focus_losses;
      out.away_ms = out.absences.reduce(function (sum, a) { return sum + a[1] - a[0]; }, 0);
    }
    return JSON.stringify(out);
  }

  // Leaving the page (reload, another tab, closing): the server adds this view's counts to
  // the text's totals. Sent on every hiding, as phones may never fire pagehide.
  function beacon() {
    if (submitted || !form.dataset.beacon || !navigator.sendBeacon) return;
    var data = new FormData();
    var csrf = form.elements.csrfmiddlewaretoken;
    if (csrf) data.append("csrfmiddlewaretoken", csrf.value);
    data.append("telemetry", report());
    navigator.sendBeacon(form.dataset.beacon, data);
  }

  document.addEventListener("visibilitychange", function () {
    if (document.visibilityState === "hidden") { leave(); beacon(); }
    else if (document.hasFocus()) back();
  });
  window.addEventListener("blur", leave);
  window.addEventListener("focus", back);
  window.addEventListener("pagehide", beacon);
  // Absences are also looked for, not only heard of: a page script that drops the page's
  // listeners (issue 48) hides no absence from a look at the page's state every second
  // (browsers run a hidden tab's timers at least that often for its first minutes; the
  // look on coming back ends the absence either way).
  if (on("focus")) {
    setInterval(function () {
      if (document.visibilityState === "hidden" || !document.hasFocus()) leave();
      else back();
    }, 1000);
  }

  form.addEventListener("submit", function () {
    back();
    submitted = true;
    form.elements.telemetry.value = report();
  });
})();
