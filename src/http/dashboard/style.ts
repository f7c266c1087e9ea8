/**
 * The dashboard's stylesheet, served after the pages' own one (whose colour variables it uses): the
 * navigation shell, tables, badges, the queue grid, the calendar week, charts, compose.
 */
export const DASHBOARD_CSS = `:root { --warn: #8a4b00; }
@media (prefers-color-scheme: dark) { :root { --warn: #e3b341; } }
body.dashboard main { max-width: 64rem; margin: 1.5rem 0 4rem; }
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
/* A phone: the navigation becomes a few rows that scroll sideways (no script), so the page's heading stays
   in the first screen. */
@media (max-width: 48rem) {
  .shell { grid-template-columns: minmax(0, 1fr); }
  .shell > nav {
    border-right: none; border-bottom: 1px solid var(--line); padding: .25rem .5rem; min-width: 0;
  }
  .shell > nav ul {
    display: flex; flex-wrap: nowrap; gap: .25rem; margin: 0; overflow-x: auto; white-space: nowrap;
    scrollbar-width: thin;
  }
  .shell > nav li a { padding: .3rem .5rem; }
  .switcher { margin: 0; }
  .switcher summary { padding: .3rem .5rem; }
  body.dashboard main { margin-top: .75rem; }
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
fieldset {
  border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; margin: 0 0 1.25rem;
  min-width: 0;
}
.choice { display: flex; gap: .5rem; align-items: baseline; flex-wrap: wrap; margin: .25rem 0; }
.choice label { display: inline; font-weight: 400; }
.table-wrap { overflow-x: auto; margin: 0 0 1.5rem; position: relative; }
.decisions { display: grid; gap: 1rem; margin: 0 0 1.5rem; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; font-weight: 600; padding: 0 0 .5rem; }
th, td { text-align: left; padding: .45rem .6rem; border-bottom: 1px solid var(--line); vertical-align: top; }
td { overflow-wrap: break-word; }
td button { white-space: nowrap; }
form.inline { display: inline; margin: 0; }
button.danger { background: var(--danger); border-color: var(--danger); color: var(--accent-fg); }
.badge {
  display: inline-block; padding: 0 .45rem; border-radius: 1rem; font-size: .85rem; border: 1px solid;
}
.badge.ok { color: var(--ok); }
.badge.warn { color: var(--warn); }
.badge.danger { color: var(--danger); }
.badge.neutral { color: var(--muted); }
.secret { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; }
.secret code {
  padding: .35rem .5rem; background: var(--panel); border-radius: .25rem; overflow-wrap: anywhere;
}
.tabs { display: flex; flex-wrap: wrap; gap: .25rem .75rem; list-style: none; padding: 0; margin: 0 0 1rem; }
.tabs a[aria-current=page] { font-weight: 700; color: var(--fg); }
.pager { margin: 1rem 0; }
progress { width: 100%; }
input[type=date] {
  display: block; margin-top: .35rem; padding: .45rem .6rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem; max-width: 100%;
}
.queue-grid td, .queue-grid th { text-align: center; }
.queue-grid td:first-child, .queue-grid th:first-child { text-align: left; }
.queue-grid input[type=time] { margin-top: 0; }
.queue-grid abbr { text-decoration: none; }
/* Posts, calendar and analytics. */
.post-text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0 0 .5rem; }
.post-items { padding-left: 1.5rem; margin: 0 0 1.5rem; }
.filters { margin: 0 0 1rem; }
.filters summary { cursor: pointer; font-weight: 600; }
.filters form, form.range { display: flex; flex-wrap: wrap; gap: 0 1rem; align-items: flex-end; }
.filters .field, form.range .field { margin-bottom: .75rem; }
form.range button, .filters button { margin-bottom: .75rem; }
input[type=date] {
  display: block; margin-top: .35rem; padding: .45rem .6rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem; max-width: 100%;
}
.week { list-style: none; padding: 0; margin: 0 0 1.5rem; display: grid; gap: .5rem;
  grid-template-columns: repeat(7, minmax(0, 1fr)); }
.week > li { border: 1px solid var(--line); border-radius: .375rem; padding: .5rem; min-width: 0; }
.week > li[aria-current=date] { border: 2px solid var(--accent); }
.week h2 { font-size: .95rem; margin: 0 0 .5rem; }
.week ul { list-style: none; padding: 0; margin: 0; }
.week ul li { margin: 0 0 .5rem; font-size: .9rem; overflow-wrap: anywhere; }
.week .published a { color: var(--muted); }
.week .slot { color: var(--fg); background: var(--panel); border: 1px dashed var(--muted); border-radius: .25rem;
  padding: .15rem .4rem; }
.week li[draggable=true] { cursor: grab; }
.week .dragging, .week .moving { opacity: .5; }
.week .drop-target { outline: 2px dashed var(--accent); outline-offset: 2px; }
.cal-move summary { cursor: pointer; font-size: .85rem; }
.cal-move form { margin: .25rem 0 0; }
.cal-move .field { margin-bottom: .5rem; }
.destinations { list-style: none; padding: 0; margin: 0; }
.destinations li { margin: 0 0 .25rem; }
@media (max-width: 60rem) { .week { grid-template-columns: 1fr; } }
.charts { display: grid; gap: 1.5rem; margin: 0 0 1rem; }
.charts figure, figure { margin: 0 0 1rem; max-width: 100%; }
/* Charts: places in percent, so they fill the width and their text stays at the page's size. */
:root { --s1: #b45309; --s2: #047857; --s3: #7c3aed; --s4: #be123c; }
@media (prefers-color-scheme: dark) { :root { --s1: #f59e0b; --s2: #34d399; --s3: #a78bfa; --s4: #fb7185; } }
.chart-figure figcaption { font-weight: 600; }
.chart { display: block; width: 100%; overflow: visible; }
.chart text { fill: var(--muted); font-size: .8rem; }
.chart .y-tick { paint-order: stroke; stroke: var(--bg); stroke-width: 4px; stroke-linejoin: round; }
.chart .axis-title { fill: var(--fg); font-size: .85rem; }
.chart .grid { stroke: var(--line); }
.chart .grid.base { stroke: var(--muted); }
.chart rect { stroke: var(--bg); stroke-width: 1px; }
.chart .s0 { fill: var(--accent); } .chart .s1 { fill: var(--s1); } .chart .s2 { fill: var(--s2); }
.chart .s3 { fill: var(--s3); } .chart .s4 { fill: var(--s4); }
@media (max-width: 40rem) { .chart .wide-only { display: none; } }
.legend { list-style: none; display: flex; flex-wrap: wrap; gap: .25rem 1rem; padding: 0; margin: .25rem 0 .5rem;
  font-size: .9rem; }
.swatch { display: inline-block; width: .8rem; height: .8rem; border-radius: .15rem; margin-right: .35rem; }
.swatch.s0 { background: var(--accent); } .swatch.s1 { background: var(--s1); }
.swatch.s2 { background: var(--s2); } .swatch.s3 { background: var(--s3); } .swatch.s4 { background: var(--s4); }
.chart-summary { margin: .25rem 0 .5rem; }
.chart-table summary { cursor: pointer; }
/* Destinations and webhooks. */
.connect-grid { display: grid; gap: 1rem;
  grid-template-columns: repeat(auto-fill, minmax(min(17rem, 100%), 1fr)); }
.connect-grid > section { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem 1rem; }
.connect-grid h3 { margin: 0 0 .5rem; }
input[type=url] { width: 100%; }
.row-actions { display: flex; flex-wrap: wrap; gap: .5rem; }
ul.deliveries { list-style: none; padding: 0; }
ul.deliveries > li { border-bottom: 1px solid var(--line); padding: .5rem 0; }
details.delivery > summary { cursor: pointer; }
details.delivery h3 { font-size: 1rem; margin: 1rem 0 .35rem; }
pre.wire { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel); padding: .5rem .75rem;
  border-radius: .25rem; margin: 0 0 .75rem; }
.compose-item .attached { list-style: none; padding: 0; margin: .25rem 0 .75rem; }
.compose-item .attached li {
  display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; margin: .25rem 0;
}
.compose-item .media-title { font-weight: 600; margin: .75rem 0 0; }
.compose-item > button { margin: .25rem .5rem .25rem 0; }
.compose .actions { display: flex; flex-wrap: wrap; gap: .5rem; }
/* Compose: the form beside its preview and checks (one column on a phone, the pane after the form). */
.compose-layout { display: grid; grid-template-columns: minmax(0, 1fr) minmax(16rem, 22rem); gap: 1.5rem;
  align-items: start; }
.compose-pane { position: sticky; top: .5rem; border: 1px solid var(--line); border-radius: .5rem;
  padding: .75rem 1rem; max-height: calc(100vh - 1rem); overflow: auto; }
.compose-pane h2 { margin-top: 0; font-size: 1.15rem; }
.compose-pane h3 { font-size: 1rem; margin: 1rem 0 .35rem; }
.compose-pane .network { color: var(--muted); font-weight: 400; }
.compose-pane ul.counters, .compose-pane ul.issues { margin: .25rem 0 .5rem; padding-left: 1.1rem; }
.compose-pane ul.issues li, .compose-pane li.over, .counter.over { color: var(--danger); }
.compose-pane .fine { color: var(--ok); margin: .25rem 0; }
.compose-pane[aria-busy=true] .pane-summary::after { content: " (checking…)"; color: var(--muted); }
@media (max-width: 60rem) {
  .compose-layout { grid-template-columns: minmax(0, 1fr); }
  .compose-pane { position: static; max-height: none; }
}
.counter { color: var(--muted); font-size: .9rem; margin: -.25rem 0 .5rem; min-height: 1.2em; }
.compose-item .attached li.media-card { border: 1px solid var(--line); border-radius: .375rem; padding: .5rem;
  align-items: flex-start; }
.media-card .thumb { width: 4.5rem; height: 4.5rem; object-fit: cover; border-radius: .25rem; background: var(--panel);
  display: inline-flex; align-items: center; justify-content: center; flex: none; }
.media-card .media-name { flex: 1 1 10rem; overflow-wrap: anywhere; }
.media-card .field { flex: 1 1 100%; margin: 0; }
.media-card .media-actions { display: flex; flex-wrap: wrap; gap: .5rem; }
.dropzone { border: 2px dashed var(--line); border-radius: .5rem; padding: .75rem; text-align: center;
  color: var(--muted); margin: .25rem 0 .5rem; }
.dropzone.over { border-color: var(--accent); color: var(--fg); background: var(--panel); }
ul.uploads { list-style: none; padding: 0; margin: 0; }
ul.uploads li { display: flex; gap: .5rem; align-items: center; }
ul.uploads progress { flex: 1; }
`;
