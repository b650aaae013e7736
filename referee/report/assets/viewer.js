// The replay viewer (referee/report): places what the page's data says, frame by
// frame.  It knows no rules: every table, event line and legal list was computed by
// the referee's engine in Python; this only chooses which one to show.
// Keys: Right/Left step, PageDown/PageUp next/previous turn, Home/End, Space play.
"use strict";
(function () {
  var D = JSON.parse(document.getElementById("game-data").textContent);
  var last = D.frames.length - 1;
  var st = { k: 0, view: "omni", timer: null };
  var $ = function (id) { return document.getElementById(id); };

  // Every node is built with createElement and textContent: what a bot wrote (its
  // name, its decisions, a fault's detail) is placed as text, never parsed as HTML.
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent) {
    for (var i = 1; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === "") continue;
      parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return parent;
  }
  function fill(id) {
    var e = $(id);
    e.textContent = "";
    return add.apply(null, [e].concat(Array.prototype.slice.call(arguments, 1)));
  }
  function card(t, extra) {
    if (t === "?") return el("i", "c ch", "?");
    var e = el("i", "c c" + t.slice(-1) + (extra || ""), t);
    e.setAttribute("data-card", t);
    return e;
  }
  function cards(list) {
    var f = document.createDocumentFragment();
    if (!list.length) return add(f, el("span", "none", "none"));
    list.forEach(function (t) { f.appendChild(card(t)); });
    return f;
  }
  function backs(n) {
    var f = document.createDocumentFragment();
    for (var i = 0; i < Math.min(n, 12); i++) f.appendChild(el("i", "c ch", "?"));
    return add(f, (n > 12 ? " +" + (n - 12) : "") + " ", el("span", "count", n + " card" + (n === 1 ? "" : "s")));
  }
  function code(text) { return el("code", "", text); }
  // An event line: text and cards taking turns (every odd item a card's text, "?"
  // hidden); null: as in the omniscient view.
  function line(v, k, j) {
    var e = D.events[v][k][j];
    if (e === null) e = D.events.omni[k][j];
    var f = document.createDocumentFragment();
    e.forEach(function (part, i) { add(f, i % 2 ? card(part) : part); });
    return f;
  }
  function ms(x) { return x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(3); }
  function label(s) { return D.names[s] + " [" + s + "]"; }
  function row(name) {
    return add(el("div", "row"), el("b", "", name), " ");
  }

  function seatBox(t, f, s) {
    var o = { hand: t[s][0], up: t[s][1], down: t[s][2], place: t[s][3], choice: t[s][4] };
    var box = el("div", "seat" + (f.to_move === s ? " to-move" : "") + (st.view === String(s) ? " me" : ""));
    box.setAttribute("data-seat", String(s));
    add(box, add(el("div", "name", label(s)), o.place ? " " : "", o.place ? el("span", "place", "place " + o.place) : null));
    var hand = row(f.phase === "setup" ? "dealt" : "hand");
    hand.className = "row hand";
    add(box, add(hand, typeof o.hand === "number" ? backs(o.hand) : cards(o.hand)));
    if (o.choice) add(box, add(row("3UP chosen"), cards(o.choice)));
    add(box, add(row("3UP"), o.up === null ? el("span", "none", "face down until every seat has chosen") : cards(o.up)));
    var down = row("3DOWN");
    o.down.forEach(function (d) { down.appendChild(d === null ? el("i", "c cx", "·") : card(d, " down")); });
    return add(box, down);
  }

  function render() {
    var k = st.k, v = st.view, f = D.frames[k], t = D.tables[v][k];
    var seat = v === "omni" ? null : Number(v);
    $("turn").textContent = String(f.turn);
    $("step").textContent = k + " / " + last;
    $("slider").value = String(k);
    var seats = fill("seats");
    for (var s = 0; s < D.players; s++) seats.appendChild(seatBox(t, f, s));
    fill("pile", el("b", "", "pile"), " ", f.pile.length ? cards(f.pile) : el("span", "none", "empty: anything may be played"),
      f.pile.length ? " " : "", f.pile.length ? el("span", "count", "(top last)") : null);
    fill("stock", el("b", "", "draw pile"), " " + f.draw + " · ", el("b", "", "cleared"),
      " " + f.cleared + " · play goes " + (f.dir === 1 ? "clockwise" : "counter-clockwise") + " · phase " + f.phase +
      (f.extra ? " · an extra action" + (f.pending ? " (" + f.pending + " more after it)" : "")
        : f.pending ? " · " + f.pending + " extra action(s) pending" : ""));
    // The decision that led here: its text and time are shown to the omniscient view
    // and to the seat that made it (another seat saw only its events).
    if (k === 0) fill("decision", "the deal");
    else if (seat === null || seat === f.seat) {
      fill("decision", label(f.seat) + " decided ", code(f.decision), " in ", el("span", "ms", ms(f.ms) + " ms"),
        f.sub ? " " : "", f.sub ? el("span", "sub", "played by the referee") : null);
    } else fill("decision", label(f.seat) + " decided");
    var faults = fill("faults");
    f.faults.forEach(function (x) {
      var own = seat === null || seat === x.seat;
      add(faults, add(el("div", "fault"), el("b", "", "fault"),
        " " + label(x.seat) + " at turn " + x.turn + ": " + x.kind + (own ? ": " + x.detail : "") + " ",
        el("b", "", "→ " + x.action),
        own && f.sub && f.seat === x.seat ? "; the referee played " : "",
        own && f.sub && f.seat === x.seat ? code(f.decision) : null));
    });
    var events = fill("events");
    D.events[v][k].forEach(function (e, j) { events.appendChild(add(el("li"), line(v, k, j))); });
    if (f.next !== undefined && (seat === null || seat === f.next)) {
      var nx = fill("next", "next: " + label(f.next) + " decides; legal:");
      f.legal.forEach(function (d) { add(nx, " ", code(d)); });
    } else if (f.next !== undefined) fill("next", "next: " + label(f.next) + " decides");
    else fill("next", D.result ? "game over: " + D.result : "end of the record");
    var lg = fill("log");
    for (var i = 0; i <= k; i++) {
      var evs = D.events[v][i];
      // a fault is marked in the list where it happened (before the events of the
      // decision the referee played for it); its detail only to its own seat's view
      D.frames[i].faults.forEach(function (x) {
        var mine = seat === null || seat === x.seat;
        lg.appendChild(add(el("li", "fault-mark" + (i === k ? " now" : "")), el("b", "", "⚠ fault"),
          " " + label(x.seat) + ": " + x.kind + (mine ? ": " + x.detail : "") + " → " + x.action));
      });
      for (var j = 0; j < evs.length; j++) lg.appendChild(add(el("li", i === k ? "now" : ""), line(v, i, j)));
    }
    lg.scrollTop = lg.scrollHeight;
    var links = document.querySelectorAll("a.seating");
    for (var a = 0; a < links.length; a++) {
      links[a].setAttribute("href", links[a].getAttribute("data-href") + "#turn=" + f.turn + "&view=" + v);
    }
    try { history.replaceState(null, "", "#step=" + k + "&view=" + v); } catch (e) { /* file:// may refuse */ }
  }

  function go(k) { st.k = Math.max(0, Math.min(last, k)); render(); }
  function turnFrame(n) {
    for (var i = 0; i <= last; i++) if (D.frames[i].turn >= n) return i;
    return last;
  }
  function nextTurn(dir) {
    var t = D.frames[st.k].turn;
    if (dir > 0) { for (var i = st.k + 1; i <= last; i++) if (D.frames[i].turn > t) return go(i); return go(last); }
    var target = t - 1;
    go(turnFrame(Math.max(0, target)));
  }
  function play() {
    if (st.timer) { clearInterval(st.timer); st.timer = null; $("play").textContent = "▶ play"; return; }
    $("play").textContent = "❚❚ pause";
    st.timer = setInterval(function () { if (st.k >= last) play(); else go(st.k + 1); }, 400);
  }

  $("first").onclick = function () { go(0); };
  $("back").onclick = function () { go(st.k - 1); };
  $("fwd").onclick = function () { go(st.k + 1); };
  $("end").onclick = function () { go(last); };
  $("play").onclick = play;
  $("slider").max = String(last);
  $("slider").oninput = function () { go(Number($("slider").value)); };
  // after a jump the keys step the game again (the turn box lets go of them)
  $("jump").onsubmit = function (e) { e.preventDefault(); $("to-turn").blur(); go(turnFrame(Number($("to-turn").value))); };
  var vs = $("view");
  D.views.forEach(function (v) {
    var o = document.createElement("option");
    o.value = v;
    o.textContent = v === "omni" ? "omniscient (every card)" : "seat " + v + ": " + D.names[Number(v)];
    vs.appendChild(o);
  });
  vs.onchange = function () { st.view = vs.value; vs.blur(); render(); };
  document.addEventListener("keydown", function (e) {
    if (e.target && (e.target.tagName === "INPUT" || e.target.tagName === "SELECT") && e.key !== "Escape") return;
    if (e.key === "ArrowRight" || e.key === "l") go(st.k + 1);
    else if (e.key === "ArrowLeft" || e.key === "h") go(st.k - 1);
    else if (e.key === "PageDown") nextTurn(1);
    else if (e.key === "PageUp") nextTurn(-1);
    else if (e.key === "Home") go(0);
    else if (e.key === "End") go(last);
    else if (e.key === " ") play();
    else if (e.key === "t") { $("to-turn").focus(); }
    else if (e.key === "v") {
      st.view = D.views[(D.views.indexOf(st.view) + 1) % D.views.length];
      vs.value = st.view;
      render();
    }
    else if (e.key === "Escape") { document.activeElement.blur(); }
    else return;
    e.preventDefault();
  });
  // #step=K or #turn=N, and &view=V (links between seatings carry the turn).
  var h = {};
  location.hash.slice(1).split("&").forEach(function (p) { var kv = p.split("="); if (kv[0]) h[kv[0]] = kv[1]; });
  var view = h.view !== undefined ? h.view : D.start.view;
  if (D.views.indexOf(view) < 0) view = D.views.indexOf(D.start.view) >= 0 ? D.start.view : D.views[0];
  st.view = view; vs.value = view;
  if (h.step !== undefined) st.k = Math.max(0, Math.min(last, Number(h.step) || 0));
  else if (h.turn !== undefined) st.k = turnFrame(Number(h.turn) || 0);
  else if (D.start.turn) st.k = turnFrame(D.start.turn);
  render();
})();
