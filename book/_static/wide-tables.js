// A table wider than the text column scrolls sideways (wide-tables.css); this marks it so the
// reader sees that it does: a line above it says so, and a shadow on the side that hides columns.
// Run on load and on resize, since a window's width decides which tables are wider than it.
(function () {
  "use strict";
  function mark() {
    document.querySelectorAll(".bd-article table").forEach(function (table) {
      var wide = table.scrollWidth > table.clientWidth + 1;
      table.classList.toggle("scrolls", wide);
      var hint = table.previousElementSibling;
      var has = hint && hint.classList.contains("scroll-hint");
      if (wide && !has) {
        hint = document.createElement("div");
        hint.className = "scroll-hint";
        hint.textContent = "Wider than the page: scroll the table sideways for more columns \u2192";
        table.parentNode.insertBefore(hint, table);
      } else if (!wide && has) {
        hint.remove();
      }
      if (wide) {
        var end = table.scrollLeft + table.clientWidth >= table.scrollWidth - 1;
        table.classList.toggle("scrolled-end", end);
      }
    });
  }
  document.addEventListener("DOMContentLoaded", function () {
    mark();
    document.querySelectorAll(".bd-article table").forEach(function (table) {
      table.addEventListener("scroll", mark, { passive: true });
    });
  });
  window.addEventListener("resize", mark);
})();
