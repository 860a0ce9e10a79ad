// MyST-NB sets every value a page glues into its prose in bold (span.pasted-text), which
// marks a computed number well and turns a glued sentence into a wall of bold text: a value
// longer than LONGEST characters (a sentence, a list) reads in the text's own weight.
(function () {
  "use strict";
  var LONGEST = 40;
  function lighten() {
    document.querySelectorAll("span.pasted-text").forEach(function (span) {
      if (span.textContent.trim().length > LONGEST) {
        span.classList.add("pasted-sentence");
      }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", lighten);
  } else {
    lighten();
  }
})();
