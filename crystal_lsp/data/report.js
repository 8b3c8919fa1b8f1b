// crystal-lsp scan --format html: filter findings by path or name, expand or collapse all.
(function () {
  "use strict";
  var findings = Array.prototype.slice.call(document.querySelectorAll("article.finding"));
  var filter = document.getElementById("filter");
  filter.addEventListener("input", function () {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    findings.forEach(function (article) {
      var text = article.querySelector("table.members").textContent.toLowerCase();
      var keep = words.every(function (w) { return text.indexOf(w) >= 0; });
      article.classList.toggle("hidden", !keep);
    });
  });
  function setAll(open) {
    document.querySelectorAll("details").forEach(function (d) { d.open = open; });
  }
  document.getElementById("expand").addEventListener("click", function () { setAll(true); });
  document.getElementById("collapse").addEventListener("click", function () { setAll(false); });
})();
