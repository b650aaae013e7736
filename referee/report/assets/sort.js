// Sortable tables (referee/report): a click on a header of a table.sortable sorts
// its rows by that column, again the other way.  A cell sorts by its data-value (the
// figure as JSON) when it has one, else by its text, as a number when it reads as one.
"use strict";
(function () {
  function key(cell) {
    if (!cell) return "";
    var v = cell.getAttribute("data-value");
    var t = v !== null ? v : cell.textContent.trim();
    var n = parseFloat(t);
    return isNaN(n) ? t.toLowerCase() : n;
  }
  function sortBy(table, col, th) {
    var rows = Array.prototype.slice.call(table.querySelectorAll("tr")).slice(1);
    var down = th.getAttribute("aria-sort") === "ascending";
    rows.sort(function (a, b) {
      var x = key(a.children[col]), y = key(b.children[col]);
      var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0)
                                    : (typeof x === "number" ? -1 : 1);
      return down ? -c : c;
    });
    var heads = table.querySelectorAll("tr:first-child th");
    for (var i = 0; i < heads.length; i++) heads[i].removeAttribute("aria-sort");
    th.setAttribute("aria-sort", down ? "descending" : "ascending");
    var parent = rows.length ? rows[0].parentNode : null;
    for (var j = 0; j < rows.length; j++) parent.appendChild(rows[j]);
  }
  var tables = document.querySelectorAll("table.sortable");
  for (var t = 0; t < tables.length; t++) {
    (function (table) {
      var heads = table.querySelectorAll("tr:first-child th");
      for (var i = 0; i < heads.length; i++) {
        (function (th, col) {
          th.title = "sort by this column";
          th.style.cursor = "pointer";
          th.addEventListener("click", function () { sortBy(table, col, th); });
        })(heads[i], i);
      }
    })(tables[t]);
  }
})();
