/* Participant pages: the writer's draft and character counter, the judgment form's follow-up
 * questions and the time-limit countdown. Every page works without it; the server checks
 * everything again. */
(function () {
  "use strict";
  var script = document.currentScript;

  function storage() {
    // localStorage throws in some private modes; drafts are then simply not kept.
    try { return window.localStorage; } catch (e) { return null; }
  }

  // Drafts: kept per participant and task while typing, forgotten once the task is stored
  // (its page is no longer shown: every later page clears the participant's other drafts).
  function forgetStoredDrafts(keep) {
    var prefix = script && script.dataset.draftPrefix, store = storage();
    if (!prefix || !store) return;
    for (var i = store.length - 1; i >= 0; i--) {
      var key = store.key(i);
      if (key && key.indexOf(prefix) === 0 && key !== keep) store.removeItem(key);
    }
  }

  function writerPage(area) {
    var store = storage(), key = area.dataset.draftKey;
    forgetStoredDrafts(key);
    if (store && key) {
      var draft = store.getItem(key);
      // The browser's draft is what was typed last here, newer than a rejected post.
      if (draft && draft !== area.value) {
        area.value = draft;
        // Tells telemetry.js the text is the writer's own earlier typing, not a script's.
        area.dispatchEvent(new CustomEvent("intruder-restored", { bubbles: true }));
        var note = document.getElementById("draft-restored");
        if (note) note.hidden = false;
      }
      var timer = null;
      area.addEventListener("input", function () {
        clearTimeout(timer);
        timer = setTimeout(function () {
          try {
            if (area.value.trim()) store.setItem(key, area.value); else store.removeItem(key);
          } catch (e) { /* storage full: the server still gets the text on submit */ }
        }, 250);
      });
      area.form.addEventListener("submit", function () {
        clearTimeout(timer);
        try { store.setItem(key, area.value); } catch (e) { /* see above */ }
      });
    }
    // The characters Python's str.strip() removes (str.isspace), which differ from
    // String.prototype.trim's: tests/intruder/test_writer_counter.py checks the two agree.
    var PY_EDGE_SPACE = /^[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;
    var count = document.getElementById("char-count");
    var counter = document.getElementById("char-counter");
    var reached = document.getElementById("char-minimum-reached");
    var min = parseInt(area.dataset.min, 10);
    function update() {
      // Count as the server does (writing.description_text_normalize): NFC, line breaks
      // unified, Python's whitespace stripped from both ends, then code points, so an emoji
      // is one character, not two UTF-16 units.
      var text = area.value.normalize("NFC").replace(/\r\n?/g, "\n").replace(PY_EDGE_SPACE, "");
      var n = Array.from(text).length;
      count.textContent = n;
      counter.className = n >= min ? "ok" : "muted";
      // Screen readers hear the count when they ask (aria-describedby), and one message
      // when the minimum is reached, not every keystroke.
      reached.textContent = n >= min ? "Minimum length reached." : "";
    }
    area.addEventListener("input", update);
    update();
  }

  function judgePage(form) {
    var shownAt = performance.now();
    function choice() {
      var checked = form.querySelector("input[name=self_identified]:checked");
      return checked ? checked.value : "";
    }
    function toggle() {
      // Show only the follow-up questions of the chosen answer; the server checks them again.
      var c = choice();
      form.querySelector(".if-yes").hidden = c !== "yes";
      form.querySelector(".if-no").hidden = c !== "no";
    }
    form.querySelectorAll("input[name=self_identified]").forEach(function (radio) {
      radio.addEventListener("change", toggle);
    });
    form.addEventListener("submit", function () {
      document.getElementById("client-ms").value = Math.round(performance.now() - shownAt);
    });
    toggle();
  }

  // Countdown to the text's time limit. The server sends the seconds left, so a wrong clock
  // on the participant's computer does not matter.
  function timer(box) {
    var left = document.getElementById("time-left");
    var warning = document.getElementById("time-warning");
    var deadline = performance.now() + 1000 * parseInt(box.dataset.secondsLeft, 10);
    var warnAt = parseInt(box.dataset.warnSeconds, 10);
    var warned = false, handle = null;
    function clock(s) {
      var m = Math.floor(s / 60), r = s % 60;
      return m + ":" + (r < 10 ? "0" : "") + r;
    }
    function tick() {
      var s = Math.max(0, Math.ceil((deadline - performance.now()) / 1000));
      if (s === 0) {
        left.textContent = "Time is up for this text.";
        box.className = "timer over";
        warning.textContent = "The time for this text is up. Send your answer now: it is " +
          "kept as long as the text has not been given to someone else.";
        warning.hidden = false;
        clearInterval(handle);
        return;
      }
      if (s <= warnAt) {
        left.textContent = "Time left for this text: " + clock(s);
        box.className = "timer soon";
        if (!warned) {
          warned = true;
          warning.textContent = "Less than " + Math.ceil(warnAt / 60) + " minute" +
            (warnAt > 60 ? "s" : "") + " left for this text. Please send your answer soon.";
          warning.hidden = false;
        }
      } else {
        var minutes = Math.ceil(s / 60);
        left.textContent = "Time left for this text: " + minutes + " minute" + (minutes === 1 ? "" : "s");
      }
    }
    tick();
    handle = setInterval(tick, 1000);
  }

  // After a rejected answer (shown after the redirect), start at the first field in error.
  var invalid = document.querySelector("[aria-invalid=true], .choices[aria-describedby] input");
  if (invalid) invalid.focus();

  var area = document.getElementById("description");
  if (area) writerPage(area); else forgetStoredDrafts(null);
  var form = document.getElementById("judge-form");
  if (form) judgePage(form);
  var box = document.getElementById("timer");
  if (box) timer(box);
})();
