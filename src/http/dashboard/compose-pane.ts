import { html, type Markup } from "../pages/html.ts";
import type { PostValidation } from "./api-resources.ts";
import type { ComposeDestination, ComposeState } from "./compose-read.ts";

// The compose page's pane: for each chosen destination, the counters of each item and the problems
// publishing would meet, as the validate endpoint computed them (the rules Create Post applies), so
// the page never disagrees with publishing. It is rendered with the page (no script needed) and again
// by the fragment route as the person types.

/** What the pane shows besides the form's state. */
export interface PaneInput {
  state: ComposeState;
  chosen: ComposeDestination[];
  /** The dry run of the form as it is (null: nothing chosen, or the API did not answer). */
  validation: PostValidation | null;
  /** Problems of the form itself, before the API (a time the zone skips). */
  own: string[];
  /** Each chosen destination's drawing of the post, by destination id (the network previews). */
  previews: Map<string, Markup>;
}

type Length = PostValidation["lengths"][number];
type Finding = PostValidation["errors"][number];

/** How full an item is at a destination: its tightest count (Bluesky: characters or bytes). */
function tightest(lengths: Length[]): Length | null {
  return lengths.reduce<Length | null>(
    (most, l) => (most === null || l.used / l.limit > most.used / most.limit ? l : most),
    null,
  );
}

const unitText = (l: Length) => (l.unit === "bytes" ? "bytes" : "characters");

/** The lengths of item `n` at the i-th chosen destination. */
function lengthsOf(validation: PostValidation | null, post: number, item: number): Length[] {
  const pointer = `/posts/${post}/body/${item}`;
  return (validation?.lengths ?? []).filter((l) => l.pointer === pointer);
}

/**
 * Each item's counter beside its text: per chosen destination, its tightest count ("Bluesky 12/300"),
 * and whether one is over its limit.
 */
export function itemCounters(input: PaneInput): { text: string; over: boolean }[] {
  return input.state.items.map((_, n) => {
    const parts: string[] = [];
    let over = false;
    input.chosen.forEach((d, i) => {
      const l = tightest(lengthsOf(input.validation, i, n));
      if (!l) return;
      over ||= l.used > l.limit;
      const text = `${d.networkName} ${l.used}/${l.limit}${l.unit === "bytes" ? " bytes" : ""}`;
      if (!parts.includes(text)) parts.push(text);
    });
    return { text: parts.join(" · "), over };
  });
}

/** Where a finding of post `i` is, in the person's words ("item 2", "media", "options"). */
function placeOf(pointer: string): string {
  const body = /^\/posts\/\d+\/body\/(\d+)/.exec(pointer);
  if (body) return `Item ${Number(body[1]) + 1}`;
  if (/^\/posts\/\d+\/(media|media_items)/.test(pointer)) return "Media";
  if (/^\/posts\/\d+\/destination_options/.test(pointer)) return "Options";
  return "";
}

const findingText = (f: Finding) => {
  const place = placeOf(f.pointer);
  return place ? `${place}: ${f.detail}` : f.detail;
};

/** One chosen destination: its name and network, the counters of each item, its problems, its preview. */
function destinationPane(input: PaneInput, d: ComposeDestination, i: number, findings: Finding[]): Markup {
  const id = `pane-${d.id}`;
  const mine = findings.filter((f) => f.pointer === `/posts/${i}` || f.pointer.startsWith(`/posts/${i}/`));
  const counts = input.state.items.map((_, n) => {
    const all = lengthsOf(input.validation, i, n);
    const l = tightest(all);
    if (!l) return null;
    const over = all.some((x) => x.used > x.limit);
    return html`<li class="${over ? "over" : ""}">Item ${n + 1}: ${l.used} of ${l.limit} ${unitText(l)}${
      over ? html` <strong>(over the limit)</strong>` : ""
    }</li>`;
  });
  const shown = counts.filter((c): c is Markup => c !== null);
  return html`<section class="pane-destination" aria-labelledby="${id}">
<h3 id="${id}">${d.name} <span class="network">${d.networkName}</span></h3>
${shown.length ? html`<ul class="counters" aria-label="Length, ${d.name}">${shown}</ul>` : ""}
${
  mine.length
    ? html`<ul class="issues" aria-label="Problems, ${d.name}">${mine.map((f) => html`<li>${findingText(f)}</li>`)}</ul>`
    : html`<p class="fine">Nothing to fix for ${d.name}.</p>`
}
${input.previews.get(d.id) ?? ""}
</section>`;
}

/** The pane's one-line summary, announced to screen readers when it changes. */
function summaryOf(input: PaneInput, findings: Finding[], asWarnings: boolean): string {
  if (input.chosen.length === 0) return "Choose a destination to see the post as it will look.";
  const count = findings.length + input.own.length;
  if (!input.validation) return "The post could not be checked just now.";
  if (count === 0) return asWarnings ? "Ready to publish: nothing to fix." : "Nothing to fix.";
  const problems = `${count} ${count === 1 ? "problem" : "problems"}`;
  return asWarnings
    ? `Saved as a draft it is fine; ${problems} to fix before publishing.`
    : `${problems} to fix before sending.`;
}

const itemOf = (text: string) => html`<li>${text}</li>`;

/** The pane's content (the fragment route answers with exactly this). */
export function composePane(input: PaneInput): Markup {
  const v = input.validation;
  // A draft is stored as it is: its problems are warnings; anything else refuses what `errors` say.
  const asWarnings = input.state.when === "draft";
  const findings = v ? (asWarnings ? [...v.errors, ...v.warnings] : v.errors) : [];
  const general = [
    ...input.own,
    ...findings.filter((f) => !/^\/posts\/\d+/.test(f.pointer)).map((f) => findingText(f)),
  ];
  const counters = itemCounters(input);
  return html`<h2 id="compose-pane-title">Preview and checks</h2>
<p class="pane-summary" id="compose-pane-summary" role="status">${summaryOf(input, findings, asWarnings)}</p>
${general.length ? html`<ul class="issues" aria-label="Problems with the whole post">${general.map(itemOf)}</ul>` : ""}
${input.chosen.map((d, i) => destinationPane(input, d, i, findings))}
<div hidden data-counters>${counters.map(
    (c, n) => html`<span data-item="${n}" data-over="${c.over ? "1" : "0"}">${c.text}</span>`,
  )}</div>`;
}
