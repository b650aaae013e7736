// The games tables' filters (referee/report): hide the rows that do not match.
"use strict";
(function () {
  var form = document.getElementById("filters");
  if (!form) return;
  var rows = document.querySelectorAll("#games tr[data-how]");
  function apply() {
    var opp = form.elements.opp.value, how = form.elements.how.value, faults = form.elements.faults.value;
    var result = form.elements.result ? form.elements.result.value : "";
    var shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var r = rows[i];
      var ok = (!opp || r.getAttribute("data-opp").split("|").indexOf(opp) >= 0) &&
        (!how || r.getAttribute("data-how") === how) &&
        (!faults || r.getAttribute("data-faults") === faults) &&
        (!result || r.getAttribute("data-result") === result);
      r.style.display = ok ? "" : "none";
      if (ok) shown++;
    }
    document.getElementById("shown").textContent = shown + " of " + rows.length + " shown";
  }
  form.addEventListener("change", apply);
  apply();
})();
