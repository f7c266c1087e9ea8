import { COMPOSE_JS } from "./compose-script.ts";

/**
 * The dashboard's script, progressive enhancement only (every form works without it): copy buttons for
 * secrets shown once, a confirmation before forms marked `data-confirm`, and the compose page's
 * (compose-script.ts).
 */
export const DASHBOARD_JS =
  `"use strict";
document.addEventListener("click", function (event) {
  var button = event.target.closest && event.target.closest("button[data-copy]");
  if (!button) return;
  var source = document.getElementById(button.getAttribute("data-copy"));
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent.trim()).then(function () {
    var status = document.getElementById(button.getAttribute("data-copy") + "-status");
    if (status) status.textContent = "Copied.";
  });
});
document.addEventListener("submit", function (event) {
  var form = event.target;
  var question = form.getAttribute && form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) event.preventDefault();
});
document.querySelectorAll("button[data-copy]").forEach(function (b) { b.hidden = false; });
` + COMPOSE_JS;
