/**
 * The previews' stylesheet, on top of the pages' one (its colour variables: contrast at least 4.5:1 in
 * light and dark schemes). Neutral cards, no network colours or logos: a preview is labelled a draft.
 */
export const PREVIEW_CSS = `
.pv { border: 1px solid var(--line); border-radius: .5rem; padding: .75rem; margin: 0 0 1rem; max-width: 36rem; }
.pv-thread { list-style: none; margin: 0; padding: 0; }
.pv-thread > li + li { border-top: 1px dashed var(--line); margin-top: .75rem; padding-top: .75rem; }
.pv-post { min-width: 0; }
.pv-head { display: flex; align-items: center; gap: .6rem; margin: 0 0 .5rem; }
.pv-who { display: flex; flex-wrap: wrap; gap: 0 .4rem; align-items: baseline; min-width: 0; flex: 1; }
.pv-name { font-weight: 700; overflow-wrap: anywhere; }
.pv-handle, .pv-time { color: var(--muted); font-size: .875rem; overflow-wrap: anywhere; }
.pv-time + .pv-time::before { content: "· "; }
.pv-avatar {
  flex: none; width: 2.5rem; height: 2.5rem; border-radius: 50%; display: inline-flex; align-items: center;
  justify-content: center; background: var(--panel); border: 1px solid var(--line); font-weight: 700;
  font-size: .9rem; color: var(--fg); object-fit: cover;
}
.pv-avatar.pv-square { border-radius: .375rem; }
.pv-flag {
  flex: none; align-self: flex-start; font-size: .75rem; font-weight: 700; letter-spacing: .02em;
  padding: .1rem .45rem; border: 1px solid var(--muted); border-radius: 1rem; color: var(--fg);
}
.pv-text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 0 0 .5rem; }
.pv-entity { color: var(--accent); }
a.pv-entity { text-decoration: underline; }
.pv-more { display: inline; }
.pv-more > summary { display: inline; cursor: pointer; color: var(--muted); font-weight: 600; }
.pv-more[open] > summary { display: none; }
.pv-text:has(.pv-more[open]) .pv-ellipsis { display: none; }
.pv-title { font-weight: 700; margin: .5rem 0; }
.pv-tags { margin: .5rem 0 0; font-size: .875rem; }
.pv-warning { margin: 0 0 .5rem; font-weight: 600; }
.pv-media { list-style: none; margin: 0 0 .5rem; padding: 0; display: grid; gap: 2px; border-radius: .5rem; overflow: hidden; }
.pv-tile { position: relative; min-height: 0; background: var(--panel); }
.pv-tile img, .pv-tile video, .pv-poster {
  display: block; width: 100%; height: 100%; object-fit: cover; background: var(--panel);
}
.pv-n1 .pv-tile img, .pv-n1 .pv-tile video { height: auto; max-height: 32rem; object-fit: contain; }
.pv-n1 .pv-poster { aspect-ratio: 16 / 9; }
.pv-n2 { grid-template-columns: 1fr 1fr; aspect-ratio: 2 / 1; }
.pv-n3 { grid-template-columns: 1fr 1fr; grid-template-rows: 1fr 1fr; aspect-ratio: 16 / 9; }
.pv-n3 .pv-tile:first-child { grid-row: span 2; }
.pv-n4 { grid-template-columns: 1fr 1fr; grid-template-rows: 1fr 1fr; aspect-ratio: 16 / 9; }
.pv-frame-portrait.pv-n1 .pv-tile, .pv-strip.pv-frame-portrait .pv-tile { aspect-ratio: 4 / 5; }
.pv-frame-tall.pv-n1 .pv-tile, .pv-strip.pv-frame-tall .pv-tile { aspect-ratio: 9 / 16; max-height: 32rem; }
.pv-frame-wide.pv-n1 .pv-tile { aspect-ratio: 16 / 9; }
.pv-frame-portrait .pv-tile img, .pv-frame-tall .pv-tile img, .pv-frame-tall .pv-tile video,
.pv-frame-wide .pv-tile video, .pv-frame-wide .pv-tile img { height: 100%; max-height: none; object-fit: cover; }
.pv-strip { display: flex; overflow-x: auto; scroll-snap-type: x mandatory; }
.pv-strip .pv-tile { flex: 0 0 85%; scroll-snap-align: start; aspect-ratio: 1; }
.pv-poster { display: flex; align-items: center; justify-content: center; min-height: 8rem; font-size: 2rem; color: var(--fg); }
.pv-badges { position: absolute; left: .4rem; bottom: .4rem; display: flex; gap: .25rem; }
.pv-badge {
  background: #1b1f24; color: #ffffff; font-size: .7rem; font-weight: 700; padding: .05rem .3rem; border-radius: .25rem;
}
.pv-overflow {
  position: absolute; inset: 0; display: flex; align-items: center; justify-content: center;
  background: rgba(0, 0, 0, .6); color: #ffffff; font-size: 1.5rem; font-weight: 700;
}
.pv-overlay { position: relative; max-width: 20rem; min-height: 16rem; background: var(--panel); border-radius: .5rem; }
.pv-overlay .pv-text {
  position: absolute; left: 0; right: 0; bottom: .5rem; margin: 0; padding: .5rem .75rem;
  background: rgba(0, 0, 0, .7); color: #ffffff;
}
.pv-overlay .pv-entity, .pv-overlay .pv-more > summary { color: #ffffff; font-weight: 700; }
.pv-card {
  display: flex; flex-direction: column; border: 1px solid var(--line); border-radius: .5rem; padding: .5rem .75rem;
  margin: 0 0 .5rem;
}
.pv-card-host { font-weight: 600; }
.pv-card-note, .pv-note { color: var(--muted); font-size: .875rem; }
.pv-note { margin: .25rem 0 0; }
`;
