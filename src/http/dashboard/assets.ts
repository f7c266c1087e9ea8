/**
 * The dashboard's stylesheet (added to the pages' one) and its script. The script is progressive
 * enhancement only: every form works without it. It adds copy buttons for secrets shown once, upload
 * progress for media, and a confirmation before forms marked `data-confirm`.
 */
export const DASHBOARD_CSS = `body.dashboard main { max-width: 64rem; margin: 1.5rem auto 4rem; }
.skip { position: absolute; left: -999px; top: 0; padding: .5rem 1rem; background: var(--bg); }
.skip:focus { left: .5rem; z-index: 10; }
.shell { display: grid; grid-template-columns: 13rem 1fr; gap: 0 1.5rem; max-width: 84rem; margin: 0 auto; }
.shell > nav { border-right: 1px solid var(--line); padding: 1rem; }
.shell > nav ul { list-style: none; margin: 0 0 1rem; padding: 0; }
.shell > nav li a { display: block; padding: .35rem .5rem; border-radius: .25rem; text-decoration: none; }
.shell > nav a[aria-current=page] { background: var(--panel); font-weight: 700; color: var(--fg); }
.switcher { margin: 0 0 .75rem; }
.switcher summary { cursor: pointer; font-weight: 600; padding: .35rem .5rem; }
.shell > main { min-width: 0; padding: 0 1rem; }
@media (max-width: 48rem) {
  .shell { grid-template-columns: 1fr; }
  .shell > nav { border-right: none; border-bottom: 1px solid var(--line); }
  .shell > nav ul { display: flex; flex-wrap: wrap; gap: .25rem; }
}
.visually-hidden {
  position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap;
}
textarea {
  display: block; width: 100%; margin-top: .35rem; padding: .55rem .65rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem;
}
input[type=datetime-local], input[type=number], input[type=url], input[type=file], input[type=time] {
  display: block; margin-top: .35rem; padding: .45rem .6rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem; max-width: 100%;
}
textarea[aria-invalid=true], select[aria-invalid=true] { border: 2px solid var(--danger); }
fieldset { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; margin: 0 0 1.25rem; }
.choice { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; margin: .25rem 0; }
.choice label { display: inline; font-weight: 400; }
.table-wrap { overflow-x: auto; margin: 0 0 1.5rem; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: 600; padding: 0 0 .5rem; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td { overflow-wrap: anywhere; }
form.inline { display: inline; margin: 0; }
button.danger { background: var(--danger); border-color: var(--danger); color: var(--accent-fg); }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: .85rem; border: 1px solid; }
.badge.ok { color: var(--ok); }
.badge.warn { color: var(--focus); }
.badge.danger { color: var(--danger); }
.badge.neutral { color: var(--muted); }
.secret { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret code { padding: .35rem .5rem; background: var(--panel); border-radius: .25rem; overflow-wrap: anywhere; }
.tabs { display: flex; flex-wrap: wrap; gap: .25rem .75rem; list-style: none; padding: 0; margin: 0 0 1rem; }
.tabs a[aria-current=page] { font-weight: 700; color: var(--fg); }
.pager { margin: 1rem 0; }
.chart { max-width: 100%; height: auto; color: var(--accent); }
.chart text { fill: var(--muted); font-size: 10px; }
progress { width: 100%; }
`;

export const DASHBOARD_JS = `"use strict";
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
`;
