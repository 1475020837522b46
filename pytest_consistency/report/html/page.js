(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("pc-data").textContent);
  var S = D.s, grid = document.getElementById("grid"), panel = document.getElementById("details");
  var body = grid.tBodies[0], lead = +grid.getAttribute("data-lead"), selected = null;
  // Call fields, in the order html.py writes them.
  var METHOD = 0, URL = 1, BASE = 2, KEY = 3, ASKED = 4, SERVED = 5, STATUS = 6, ERROR = 7, DETAIL = 8,
      RETRY = 9, LATENCY = 10, PROMPT = 11, COMPLETION = 12, TOTAL = 13, FLAGS = 14;
  function str(i) { return i === null || i === undefined ? null : S[i]; }
  function pretty(text, json) {
    if (!json || text === null) return text;
    try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return text; }  // cut: as it is
  }
  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }
  function distinct(calls, field) {
    var seen = [];
    calls.forEach(function (c) { var v = str(c[field]); if (v !== null && seen.indexOf(v) < 0) seen.push(v); });
    return seen;
  }
  function fact(dl, label, value, pinned) {
    dl.appendChild(el("dt", null, label));
    var dd = el("dd", null, value === null || value === "" ? "-" : value);
    if (pinned) dd.appendChild(el("span", "ne", " ≠ pinned " + pinned));
    dl.appendChild(dd);
  }
  function routeValue(values, pin) {
    var text = values.length ? values.join(", ") : null;
    var off = pin && values.some(function (v) { return v !== pin; }) ? pin : null;
    return [text, off];
  }
  function show(ti, ri, cell) {
    var task = D.t[ti], rep = task.r[ri], calls = rep.k || [], pin = D.p || {};
    var outcome = D.o[rep.o] || ["?", rep.o];
    if (selected) selected.classList.remove("sel");
    selected = cell; if (cell) cell.classList.add("sel");
    panel.textContent = "";
    var close = el("button", "close", "×");
    close.type = "button"; close.setAttribute("aria-label", "close");
    close.addEventListener("click", function () { document.body.classList.remove("open"); if (cell) cell.focus(); });
    panel.appendChild(close);
    document.body.classList.add("open");
    panel.appendChild(el("h2", null, "Repetition " + rep.r + " of " + task.n));
    panel.appendChild(el("p", "tid", str(task.id)));
    var dl = el("dl", "facts");
    fact(dl, "outcome", outcome[0] + " " + outcome[1]);
    if (rep.f !== undefined) fact(dl, "why it failed", str(rep.f));
    if (rep.e !== undefined) fact(dl, "setup error (not the agent)", str(rep.e));
    fact(dl, "answer class", rep.c ? (rep.c === "∅" ? "∅ no answer recorded" : rep.c) : null);
    var base = routeValue(distinct(calls, BASE), pin.base);
    var asked = routeValue(distinct(calls, ASKED), pin.model);
    var key = routeValue(distinct(calls, KEY), pin.key);
    fact(dl, "base URL", base[0], base[1]);
    fact(dl, "model asked", asked[0], asked[1]);
    fact(dl, "model served", distinct(calls, SERVED).join(", "));
    fact(dl, "key fingerprint", key[0], key[1]);
    var retries = 0, maxRetry = 0, p = 0, c = 0, t = 0, latency = 0, timed = false;
    calls.forEach(function (x) {
      if (x[RETRY] > 0) retries++;
      maxRetry = Math.max(maxRetry, x[RETRY]);
      p += x[PROMPT]; c += x[COMPLETION]; t += x[TOTAL];
      if (x[LATENCY] !== null) { latency += x[LATENCY]; timed = true; }
    });
    fact(dl, "calls", calls.length + (rep.w ? " (+" + rep.w + " unobserved)" : ""));
    var allowed = pin.retries !== undefined && maxRetry > pin.retries ? "max " + pin.retries : null;
    fact(dl, "retries", String(retries), allowed);
    fact(dl, "tokens", t + " (" + p + " prompt + " + c + " completion)");
    fact(dl, "latency", timed ? latency.toFixed(1) + " ms" : null);
    fact(dl, "duration", rep.d + " s");
    if (rep.x !== undefined) fact(dl, "cassette", str(rep.x));
    if (rep.u) fact(dl, "reruns", String(rep.u));
    panel.appendChild(dl);
    panel.appendChild(el("h3", null, "Answer"));
    panel.appendChild(el("pre", null, rep.a !== undefined ? pretty(str(rep.a), rep.j) : "(no answer recorded)"));
    if (rep.z !== undefined) {
      panel.appendChild(el("h3", null, "Normalised"));
      panel.appendChild(el("pre", null, pretty(str(rep.z), rep.y)));
    }
    if (rep.m && rep.m.length) {
      panel.appendChild(el("h3", null, "Notes"));
      var ul = el("ul", "events");
      rep.m.forEach(function (m) { ul.appendChild(el("li", null, str(m))); });
      panel.appendChild(ul);
    }
    panel.appendChild(el("h3", null, "Calls (" + calls.length + ")"));
    if (!calls.length) { panel.appendChild(el("p", "dim", "no calls recorded")); return; }
    var table = el("table", "plain calls"), head = el("tr");
    ["#", "call", "status", "model", "tokens", "ms"].forEach(function (h) { head.appendChild(el("th", null, h)); });
    table.appendChild(el("thead")).appendChild(head);
    var tb = el("tbody");
    calls.forEach(function (x, i) {
      var tr = el("tr"), url = str(x[URL]) || "", b = str(x[BASE]) || "";
      var path = b && url.indexOf(b) === 0 ? url.slice(b.length) || "/" : url;
      tr.appendChild(el("td", null, i + 1 + (x[RETRY] ? " (retry " + x[RETRY] + ")" : "")));
      var td = el("td", null, (str(x[METHOD]) || "") + " " + path); td.title = url; tr.appendChild(td);
      var status = x[STATUS] === null ? "-" : String(x[STATUS]);
      if (x[ERROR] !== null) status += " " + str(x[ERROR]);
      td = el("td", x[ERROR] !== null || x[STATUS] >= 400 ? "bad" : null, status);
      if (x[DETAIL] !== null) td.title = str(x[DETAIL]);
      tr.appendChild(td);
      var model = str(x[ASKED]) || "-", served = str(x[SERVED]);
      if (served && served !== str(x[ASKED])) model += " → " + served;
      tr.appendChild(el("td", null, model));
      tr.appendChild(el("td", null, x[PROMPT] + "+" + x[COMPLETION] + "=" + x[TOTAL] + (x[FLAGS] & 4 ? " est." : "")));
      tr.appendChild(el("td", null, x[LATENCY] === null ? "-" : String(x[LATENCY])));
      tb.appendChild(tr);
      if (x[DETAIL] !== null) {
        var note = el("tr"), cell = el("td", "dim", str(x[DETAIL])); cell.colSpan = 6;
        note.appendChild(cell); tb.appendChild(note);
      }
    });
    table.appendChild(tb);
    panel.appendChild(table);
  }
  function cellOf(target) {
    while (target && target !== grid) {
      if (target.nodeName === "TD" && target.classList.contains("c")) return target;
      target = target.parentNode;
    }
    return null;
  }
  function open(cell) {
    var tr = cell.parentNode;
    show(+tr.getAttribute("data-i"), cell.cellIndex - lead, cell);
    // Below the grid (when the grid leaves no room beside it) the panel may be out of sight: bring it in, as little
    // as needed. Beside the grid (sticky) or as a phone's bottom sheet (fixed) it already is.
    var r = panel.getBoundingClientRect();
    if (r.top < 0 || r.bottom > innerHeight + 1) panel.scrollIntoView({ block: "nearest" });
  }
  function focusCell(from, to, scroll) {
    if (!to || !to.classList.contains("c")) return;
    from.tabIndex = -1; to.tabIndex = 0; to.focus({ preventScroll: scroll === false });
  }
  grid.addEventListener("click", function (ev) {
    var cell = cellOf(ev.target);
    if (!cell) return;
    focusCell(grid.querySelector("td.c[tabindex='0']") || cell, cell, false);
    open(cell);
  });
  grid.addEventListener("keydown", function (ev) {
    var cell = cellOf(ev.target);
    if (!cell) return;
    var tr = cell.parentNode, i = cell.cellIndex, next = null;
    if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); open(cell); return; }
    if (ev.key === "ArrowRight") next = tr.cells[i + 1];
    else if (ev.key === "ArrowLeft") next = tr.cells[i - 1];
    else if (ev.key === "ArrowDown") next = tr.nextElementSibling && tr.nextElementSibling.cells[i];
    else if (ev.key === "ArrowUp") next = tr.previousElementSibling && tr.previousElementSibling.cells[i];
    else return;
    ev.preventDefault();
    focusCell(cell, next);
  });
  var KEYS = {
    order: function (tr) { return +tr.getAttribute("data-i"); },
    gap: function (tr) { var g = tr.getAttribute("data-gap"); return g === "" ? null : +g; },
    verdict: function (tr) { return +tr.getAttribute("data-vr"); },
    attribution: function (tr) { return +tr.getAttribute("data-ar"); },
    cause: function (tr) { return +tr.getAttribute("data-cr"); }
  };
  var FIRST = { order: 1, gap: -1, verdict: 1, attribution: 1, cause: 1 }, current = "order", direction = 1;
  Array.prototype.forEach.call(grid.querySelectorAll("th button[data-sort]"), function (button) {
    button.addEventListener("click", function () {
      var name = button.getAttribute("data-sort"), key = KEYS[name];
      direction = name === current ? -direction : FIRST[name];
      current = name;
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var ka = key(a), kb = key(b);
        if (ka !== kb) {
          if (ka === null) return 1;  // no figure: last, whichever the direction
          if (kb === null) return -1;
          return ka < kb ? -direction : direction;
        }
        return KEYS.order(a) - KEYS.order(b);
      });
      var fragment = document.createDocumentFragment();
      rows.forEach(function (tr) { fragment.appendChild(tr); });
      body.appendChild(fragment);
      Array.prototype.forEach.call(grid.tHead.rows[0].cells, function (th) { th.removeAttribute("aria-sort"); });
      button.parentNode.setAttribute("aria-sort", direction > 0 ? "ascending" : "descending");
    });
  });
})();
