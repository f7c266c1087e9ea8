/**
 * The stylesheet of the hosted pages, served by Herald itself at `/pages/herald.css` (no external
 * assets, no fonts to fetch). Focus is always visible; colours keep at least 4.5:1 contrast in light
 * and dark schemes.
 */
export const PAGE_CSS = `:root {
  color-scheme: light dark;
  --bg: #ffffff; --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --accent: #0b5cad;
  --accent-fg: #ffffff; --danger: #b3261e; --ok: #1a7f37; --panel: #f6f8fa; --focus: #e8a400;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0d1117; --fg: #e6edf3; --muted: #9da7b3; --line: #30363d; --accent: #58a6ff;
    --accent-fg: #0d1117; --danger: #ff7b72; --ok: #56d364; --panel: #161b22; --focus: #f2cc60;
  }
}
* { box-sizing: border-box; }
body {
  margin: 0;
  background: var(--bg);
  color: var(--fg);
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
}
header {
  border-bottom: 1px solid var(--line);
  padding: .75rem 1rem;
  display: flex;
  flex-wrap: wrap;
  gap: .5rem 1rem;
  align-items: center;
  justify-content: space-between;
}
header .brand { font-weight: 700; font-size: 1.125rem; color: var(--fg); text-decoration: none; }
header form { margin: 0; display: flex; gap: .75rem; align-items: center; }
main { max-width: 34rem; margin: 2rem auto 4rem; padding: 0 1rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 1rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .5rem; }
p { margin: 0 0 1rem; }
a { color: var(--accent); }
code, .code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
.code { font-size: 1.5rem; letter-spacing: .15em; }
.muted, .hint { color: var(--muted); }
.hint { margin: .15rem 0 .35rem; font-size: .925rem; }
.field { margin: 0 0 1.25rem; }
label, legend { display: block; font-weight: 600; }
fieldset { border: 0; padding: 0; margin: 0 0 1.25rem; min-width: 0; }
legend { padding: 0; }
.choice { margin: .5rem 0 0; }
.choice label { display: inline; }
.choice .hint { margin-left: 1.75rem; }
input[type=text], input[type=email], input[type=password], select {
  display: block; width: 100%; margin-top: .35rem; padding: .55rem .65rem; font: inherit; color: var(--fg);
  background: var(--bg); border: 1px solid var(--muted); border-radius: .375rem;
}
input[aria-invalid=true] { border: 2px solid var(--danger); }
.error { color: var(--danger); font-weight: 600; margin: .15rem 0 .35rem; }
.errors { border: 2px solid var(--danger); border-radius: .5rem; padding: .75rem 1rem; margin: 0 0 1.5rem; }
.errors h2 { margin: 0 0 .25rem; font-size: 1rem; color: var(--danger); }
.errors ul { margin: 0; padding-left: 1.25rem; }
.notice {
  background: var(--panel);
  border-left: 4px solid var(--accent);
  padding: .75rem 1rem;
  margin: 0 0 1.5rem;
}
.notice.ok { border-left-color: var(--ok); }
.notice.warn { border-left-color: var(--danger); }
dl { display: grid; grid-template-columns: max-content 1fr; gap: .35rem 1rem; margin: 0 0 1.5rem; }
dt { font-weight: 600; }
dd { margin: 0; overflow-wrap: anywhere; }
ul.plain { padding-left: 1.25rem; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; margin-top: 1.5rem; }
button, .button {
  font: inherit; font-weight: 600; padding: .55rem 1.1rem; border-radius: .375rem; cursor: pointer;
  border: 2px solid var(--accent); background: var(--accent); color: var(--accent-fg); text-decoration: none;
}
button.secondary { background: transparent; color: var(--accent); }
button.link {
  background: none;
  border: none;
  padding: 0;
  color: var(--accent);
  text-decoration: underline;
  font-weight: 400;
}
a:focus-visible, button:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible {
  outline: 3px solid var(--focus); outline-offset: 2px;
}
`;
