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

  function card(t, extra) {
    if (t === "?") return '<i class="c ch">?</i>';
    return '<i class="c c' + t.slice(-1) + (extra || "") + '" data-card="' + t + '">' + t + "</i>";
  }
  function cards(list) {
    return list.length ? list.map(function (t) { return card(t); }).join("") : '<span class="none">none</span>';
  }
  function backs(n) {
    var s = "";
    for (var i = 0; i < Math.min(n, 12); i++) s += '<i class="c ch">?</i>';
    return s + (n > 12 ? " +" + (n - 12) : "") + ' <span class="count">' + n + " card" + (n === 1 ? "" : "s") + "</span>";
  }
  // An event line: cards are written {7r} (hidden ones {?}), null: as in the omniscient view.
  function line(v, k, j) {
    var e = D.events[v][k][j];
    if (e === null) e = D.events.omni[k][j];
    return e.replace(/\{([^{}]+)\}/g, function (m, t) { return card(t); });
  }
  function ms(x) { return x >= 10 ? x.toFixed(0) : x >= 1 ? x.toFixed(1) : x.toFixed(3); }
  function label(s) { return D.names[s] + " [" + s + "]"; }
  function esc(s) { return String(s).replace(/[&<>"']/g, function (c) { return "&#" + c.charCodeAt(0) + ";"; }); }

  function seatBox(t, f, s) {
    var o = { hand: t[s][0], up: t[s][1], down: t[s][2], place: t[s][3], choice: t[s][4] };
    var down = o.down.map(function (d) {
      return d === null ? '<i class="c cx">·</i>' : card(d, " down");
    }).join("");
    var cls = "seat" + (f.to_move === s ? " to-move" : "") + (st.view === String(s) ? " me" : "");
    var place = o.place ? ' <span class="place">place ' + o.place + "</span>" : "";
    var hand = typeof o.hand === "number" ? backs(o.hand) : cards(o.hand);
    var choice = o.choice ? '<div class="row"><b>3UP chosen</b> ' + cards(o.choice) + "</div>" : "";
    return '<div class="' + cls + '" data-seat="' + s + '"><div class="name">' + esc(label(s)) + place + "</div>" +
      '<div class="row hand"><b>' + (f.phase === "setup" ? "dealt" : "hand") + "</b> " + hand + "</div>" + choice +
      '<div class="row"><b>3UP</b> ' + (o.up === null ? '<span class="none">face down until every seat has chosen</span>' : cards(o.up)) + "</div>" +
      '<div class="row"><b>3DOWN</b> ' + down + "</div></div>";
  }

  function render() {
    var k = st.k, v = st.view, f = D.frames[k], t = D.tables[v][k];
    var seat = v === "omni" ? null : Number(v);
    $("turn").textContent = String(f.turn);
    $("step").textContent = k + " / " + last;
    $("slider").value = String(k);
    var html = "";
    for (var s = 0; s < D.players; s++) html += seatBox(t, f, s);
    $("seats").innerHTML = html;
    $("pile").innerHTML = "<b>pile</b> " + (f.pile.length ? cards(f.pile) + ' <span class="count">(top last)</span>'
      : '<span class="none">empty: anything may be played</span>');
    $("stock").innerHTML = "<b>draw pile</b> " + f.draw + " · <b>cleared</b> " + f.cleared +
      " · play goes " + (f.dir === 1 ? "clockwise" : "counter-clockwise") + " · phase " + f.phase +
      (f.extra ? " · an extra action" + (f.pending ? " (" + f.pending + " more after it)" : "")
        : f.pending ? " · " + f.pending + " extra action(s) pending" : "");
    // The decision that led here: its text and time are shown to the omniscient view
    // and to the seat that made it (another seat saw only its events).
    var dec = "";
    if (k === 0) dec = "the deal";
    else if (seat === null || seat === f.seat) {
      dec = esc(label(f.seat)) + " decided <code>" + f.decision + "</code> in <span class=\"ms\">" +
        ms(f.ms) + " ms</span>" + (f.sub ? ' <span class="sub">played by the referee</span>' : "");
    } else dec = esc(label(f.seat)) + " decided";
    $("decision").innerHTML = dec;
    var fl = f.faults.map(function (x) {
      var own = seat === null || seat === x.seat;
      return '<div class="fault"><b>fault</b> ' + esc(label(x.seat)) + " at turn " + x.turn + ": " + x.kind +
        (own ? ": " + x.detail : "") + " <b>→ " + x.action + "</b>" +
        (own && f.sub && f.seat === x.seat ? "; the referee played <code>" + f.decision + "</code>" : "") + "</div>";
    }).join("");
    $("faults").innerHTML = fl;
    $("events").innerHTML = D.events[v][k].map(function (e, j) { return "<li>" + line(v, k, j) + "</li>"; }).join("");
    var nx = "";
    if (f.next !== undefined && (seat === null || seat === f.next)) {
      nx = "next: " + esc(label(f.next)) + " decides; legal: " +
        f.legal.map(function (d) { return "<code>" + d + "</code>"; }).join(" ");
    } else if (f.next !== undefined) nx = "next: " + esc(label(f.next)) + " decides";
    else nx = D.result ? "game over: " + D.result : "end of the record";
    $("next").innerHTML = nx;
    var log = "";
    for (var i = 0; i <= k; i++) {
      var evs = D.events[v][i];
      for (var j = 0; j < evs.length; j++) log += "<li" + (i === k ? ' class="now"' : "") + ">" + line(v, i, j) + "</li>";
    }
    var lg = $("log");
    lg.innerHTML = log;
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
  if (D.views.indexOf(view) >= 0) { st.view = view; vs.value = view; }
  if (h.step !== undefined) st.k = Math.max(0, Math.min(last, Number(h.step) || 0));
  else if (h.turn !== undefined) st.k = turnFrame(Number(h.turn) || 0);
  else if (D.start.turn) st.k = turnFrame(D.start.turn);
  render();
})();
