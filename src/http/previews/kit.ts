// The parts every network's preview is built from (src/providers/<network>/preview.ts): the card with
// its "Preview" flag and author line, text with the entities a network makes of it, the fold with the
// network's own "Show more" words, the media grid or strip, a link card placeholder and notes. Each part
// escapes what it is given (html.ts) and loads nothing heavy, so the dashboard can import it at start.
import { html, Markup } from "../pages/html.ts";
import { zonedTime } from "../pages/time.ts";
import type { PreviewAuthor, PreviewMedia } from "./index.ts";

/** A span of the text a network turns into something else than plain text. */
export interface TextEntity {
  kind: "link" | "mention" | "tag";
  /** UTF-16 offsets into the text. */
  start: number;
  end: number;
  /** What the network shows in place of the span (a shortened link); the span itself when absent. */
  display?: string;
  /** Where a link goes (http(s) only). */
  href?: string;
}

const TRAILING_PUNCTUATION = /[.,;:!?"'’”)\]]+$/u;

/** http(s) addresses written in the text, trailing punctuation left out (as the networks' linkers do). */
export function findLinks(text: string): TextEntity[] {
  const found: TextEntity[] = [];
  for (const m of text.matchAll(/(^|[\s(])(https?:\/\/[^\s<>"]+)/giu)) {
    let url = m[2]!.replace(TRAILING_PUNCTUATION, "");
    // A closing parenthesis belongs to the link only when the link opened one.
    if (m[2]!.slice(url.length).startsWith(")") && url.includes("(")) url += ")";
    if (!URL.canParse(url)) continue;
    const start = m.index + m[1]!.length;
    found.push({ kind: "link", start, end: start + url.length, href: url });
  }
  return found;
}

/**
 * `@name` mentions (and with `remote`, Mastodon's `@name@domain`; with `ascii`, X's 1–15 ASCII
 * characters): at the start or after a character that is not a letter, digit or `_`.
 */
export function findMentions(
  text: string,
  options: { remote?: boolean; dots?: boolean; ascii?: boolean } = {},
): TextEntity[] {
  const name = options.ascii
    ? "[A-Za-z0-9_]{1,15}(?![A-Za-z0-9_])"
    : options.dots
      ? "[\\p{L}\\p{N}_.]*[\\p{L}\\p{N}_]"
      : "[\\p{L}\\p{N}_]+";
  const remote = options.remote ? "(?:@[a-z0-9.-]+\\.[a-z]{2,})?" : "";
  const pattern = new RegExp(`(^|[^\\p{L}\\p{N}_@/])(@${name}${remote})`, "giu");
  return [...text.matchAll(pattern)].map((m) => {
    const start = m.index + m[1]!.length;
    return { kind: "mention" as const, start, end: start + m[2]!.length };
  });
}

/** `#tags` (and with `cash`, X's `$CASHTAGS`): a letter, digit or `_` run not made only of digits. */
export function findTags(text: string, options: { cash?: boolean } = {}): TextEntity[] {
  const found: TextEntity[] = [];
  for (const m of text.matchAll(/(^|[^\p{L}\p{N}_&#＃])([#＃][\p{L}\p{N}_]+)/gu)) {
    if (/^[#＃]\d+$/u.test(m[2]!)) continue;
    const start = m.index + m[1]!.length;
    found.push({ kind: "tag", start, end: start + m[2]!.length });
  }
  if (options.cash)
    for (const m of text.matchAll(/(^|[\s(])(\$[A-Za-z]{1,6}(?:_[A-Za-z]{1,2})?)(?![\p{L}\p{N}_])/gu)) {
      const start = m.index + m[1]!.length;
      found.push({ kind: "tag", start, end: start + m[2]!.length });
    }
  return found;
}

/** Entities in text order, an entity overlapping an earlier one dropped (a `#` inside a link). */
export function ordered(...lists: TextEntity[][]): TextEntity[] {
  const all = lists.flat().sort((a, b) => a.start - b.start || b.end - a.end);
  const out: TextEntity[] = [];
  for (const e of all) if (out.length === 0 || e.start >= out[out.length - 1]!.end) out.push(e);
  return out;
}

/** A link as X and Mastodon show it: no scheme or `www.`, cut after `keep` characters with "…". */
export function shortenedLink(url: string, keep: number): string {
  const bare = url.replace(/^https?:\/\//i, "").replace(/^www\./i, "");
  return [...bare].length > keep ? `${[...bare].slice(0, keep).join("")}…` : bare;
}

/** The text from `from` to `to` with its entities drawn: links as links, mentions and tags highlighted. */
export function richText(text: string, entities: TextEntity[], from = 0, to = text.length): Markup {
  const parts: Markup[] = [];
  let at = from;
  for (const e of entities) {
    if (e.start < from || e.end > to) continue;
    if (e.start > at) parts.push(html`${text.slice(at, e.start)}`);
    const shown = e.display ?? text.slice(e.start, e.end);
    parts.push(
      e.kind === "link" && e.href
        ? html`<a class="pv-entity" href="${e.href}" rel="noopener noreferrer nofollow">${shown}</a>`
        : html`<span class="pv-entity">${shown}</span>`,
    );
    at = e.end;
  }
  if (at < to) parts.push(html`${text.slice(at, to)}`);
  return html`${parts}`;
}

/** Where a network folds: after `chars` user-perceived characters or `lines` lines, whichever is first. */
export interface Fold {
  chars?: number;
  lines?: number;
  /** The network's words for the rest ("Show more", "…see more"). */
  more: string;
}

let segmenter: Intl.Segmenter | null = null;

/** The UTF-16 offset after `count` grapheme clusters (the text's length when it has fewer). */
function graphemeOffset(text: string, count: number): number {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  let seen = 0;
  for (const { index } of segmenter.segment(text)) {
    if (seen === count) return index;
    seen++;
  }
  return text.length;
}

/**
 * Where the text is cut under `fold`, or null when it shows whole. A cut falls back to the last space of
 * the shown part (when one is near) and never splits an entity.
 */
export function foldOffset(text: string, fold: Fold, entities: TextEntity[]): number | null {
  let cut = text.trimEnd().length;
  if (fold.chars !== undefined) cut = Math.min(cut, graphemeOffset(text, fold.chars));
  if (fold.lines !== undefined) {
    let line = 0;
    for (let i = 0; i < cut; i++)
      if (text[i] === "\n" && ++line === fold.lines) {
        cut = i;
        break;
      }
  }
  if (cut >= text.trimEnd().length) return null;
  const space = text.lastIndexOf(" ", cut);
  if (space > cut * 0.8 && text[cut] !== "\n") cut = space;
  const inside = entities.find((e) => e.start < cut && e.end > cut);
  if (inside) cut = inside.start > 0 ? inside.start : inside.end;
  return cut >= text.trimEnd().length ? null : cut;
}

/**
 * The text as the network shows it: whole, or folded with the network's "more" words. Without
 * JavaScript the rest opens in a `<details>` (the reviewer still reads every word).
 */
export function postText(
  text: string,
  entities: TextEntity[],
  fold: Fold | null,
  lead: Markup | null = null,
) {
  if (text.trim() === "" && !lead) return html``;
  const cut = fold ? foldOffset(text, fold, entities) : null;
  if (cut === null) return html`<div class="pv-text">${lead}${richText(text, entities)}</div>`;
  // "…see more" and "...more" bring their own ellipsis.
  const ellipsis = /^(…|\.\.\.)/.test(fold!.more) ? null : html`<span class="pv-ellipsis">…</span>`;
  const rest = html`<details class="pv-more"><summary>${fold!.more}</summary>${richText(text, entities, cut)}</details>`;
  return html`<div class="pv-text">${lead}${richText(text, entities, 0, cut)}${ellipsis} ${rest}</div>`;
}

/** Initials for an author without an avatar: the first letters of the first two words of the name. */
export function initials(name: string): string {
  // The first letter or digit of each word ("@ada" gives "A").
  const letters = name.match(/(?<![\p{L}\p{N}])[\p{L}\p{N}]/gu) ?? [];
  return letters.slice(0, 2).join("").toUpperCase() || "?";
}

/**
 * The avatar: the image when it is Herald's own (a same-origin path: no external assets under the
 * pages' CSP), else a box with the initials.
 */
export function avatar(author: PreviewAuthor, shape: "round" | "square" = "round"): Markup {
  const own = author.avatarUrl !== null && /^\/(?!\/)/.test(author.avatarUrl);
  return own
    ? html`<img class="pv-avatar pv-${shape}" src="${author.avatarUrl}" alt="" width="40" height="40">`
    : html`<span class="pv-avatar pv-${shape}" aria-hidden="true">${initials(author.name)}</span>`;
}

/** `@handle` (the `@` added when the handle lacks it), or null. */
export function atHandle(handle: string | null): string | null {
  if (!handle) return null;
  return handle.startsWith("@") ? handle : `@${handle}`;
}

/** When the post goes out, as the pages show instants (UTC), or "Not scheduled". */
export function whenText(at: string | null): Markup | string {
  return at && !Number.isNaN(Date.parse(at)) ? zonedTime(at) : "Not scheduled";
}

/** The author line: avatar, name, handle, time (each given or left out), and the "Preview" flag. */
export function authorLine(input: {
  author: PreviewAuthor;
  handle?: string | null;
  showName?: boolean;
  at?: Markup | string | null;
  extra?: Markup | string | null;
  shape?: "round" | "square";
}): Markup {
  const { author } = input;
  const name = input.showName === false ? null : html`<span class="pv-name">${author.name}</span>`;
  const handle = input.handle ? html`<span class="pv-handle">${input.handle}</span>` : null;
  const at = input.at ? html`<span class="pv-time">${input.at}</span>` : null;
  const extra = input.extra ? html`<span class="pv-time">${input.extra}</span>` : null;
  const who = html`<div class="pv-who">${name} ${handle} ${at} ${extra}</div>`;
  return html`<div class="pv-head">${avatar(author, input.shape)}${who}${flag()}</div>`;
}

/** The visible label that says this is a draft preview, not a post that exists. */
export function flag(): Markup {
  return html`<span class="pv-flag">Preview</span>`;
}

/** How a network lays out several media. */
export interface MediaLayout {
  /** grid: 1–4 tiles (more shown as "+N" on the last); strip: every item in a row that scrolls. */
  kind: "grid" | "strip";
  /** Whether the network shows an "ALT" badge on media with alt text. */
  altBadge: boolean;
  /** Frame of a single item: its own ratio, or the network's (Instagram 4:5, TikTok 9:16, YouTube 16:9). */
  frame?: "own" | "portrait" | "tall" | "wide";
}

function tile(m: PreviewMedia, index: number, total: number, altBadge: boolean, overlay: string | null) {
  const described = m.alt && m.alt.trim() !== "" ? m.alt : null;
  const position = total > 1 ? ` ${index + 1} of ${total}` : "";
  const size = m.width && m.height ? html` width="${m.width}" height="${m.height}"` : html``;
  let body: Markup;
  if (m.kind === "video") {
    const name = `Video${position}${described ? `: ${described}` : ""}`;
    body = m.url
      ? html`<video class="pv-video" src="${m.url}" controls preload="metadata" playsinline aria-label="${name}"${size}></video>`
      : html`<span class="pv-poster" role="img" aria-label="${name}"><span aria-hidden="true">▶</span></span>`;
  } else {
    const name = described ?? `${m.kind === "gif" ? "GIF" : "Image"}${position}, no alt text`;
    body = m.url
      ? html`<img src="${m.url}" alt="${name}" decoding="async"${size}>`
      : html`<span class="pv-poster" role="img" aria-label="${name}"></span>`;
  }
  const badges = [
    m.kind === "gif" ? html`<span class="pv-badge">GIF</span>` : null,
    altBadge && described ? html`<span class="pv-badge">ALT</span>` : null,
  ].filter((b) => b !== null);
  const more = overlay ? html`<span class="pv-overflow">${overlay}</span>` : null;
  const shown = badges.length > 0 ? html`<span class="pv-badges">${badges}</span>` : null;
  return html`<li class="pv-tile">${body} ${shown} ${more}</li>`;
}

/** The media as the network lays them out: a 1–4 grid (the rest as "+N") or a strip to scroll through. */
export function mediaGrid(media: PreviewMedia[], layout: MediaLayout): Markup {
  if (media.length === 0) return html``;
  const frame = layout.frame ?? "own";
  if (layout.kind === "strip" && media.length > 1)
    return html`<ul class="pv-media pv-strip pv-frame-${frame}" tabindex="0"
 aria-label="${media.length} media, side by side">${media.map((m, i) =>
   tile(m, i, media.length, layout.altBadge, null),
 )}</ul>`;
  const shown = media.slice(0, 4);
  const hidden = media.length - shown.length;
  const name = media.length === 1 ? "Media" : `${media.length} media`;
  return html`<ul class="pv-media pv-grid pv-n${shown.length} pv-frame-${frame}" aria-label="${name}">${shown.map(
    (m, i) => tile(m, i, media.length, layout.altBadge, hidden > 0 && i === 3 ? `+${hidden}` : null),
  )}</ul>`;
}

/** The host of a link, without `www.`. */
export function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^www\./i, "");
  } catch {
    return url;
  }
}

/**
 * The card a network draws for a link from the page's own metadata. Herald cannot know the page's title
 * or image here, so the card shows the host and says where the rest comes from.
 */
export function linkCard(url: string, network: string): Markup {
  const host = hostOf(url);
  return html`<div class="pv-card" role="group" aria-label="Link card for ${host}"><span class="pv-card-host">${host}</span>
<span class="pv-card-note">${network} shows this page's own title and image here.</span></div>`;
}

/** A note under the preview about what the network does with the post (not part of the post). */
export function note(text: string | Markup): Markup {
  return html`<p class="pv-note">${text}</p>`;
}

/** A section of one network's preview, named for that network, with its posts in order. */
export function previewSection(input: {
  network: string;
  slug: string;
  posts: Markup[];
  notes?: (Markup | null)[];
}): Markup {
  const { network, posts } = input;
  const articles = posts.map(
    (post, i) =>
      html`<article class="pv-post" aria-label="${network} post${posts.length > 1 ? ` ${i + 1} of ${posts.length}` : ""}"
>${post}</article>`,
  );
  const body =
    posts.length > 1
      ? html`<ol class="pv-thread">${articles.map((a) => html`<li>${a}</li>`)}</ol>`
      : html`${articles}`;
  return html`<section class="pv pv-${input.slug}" aria-label="${network} preview">${body}${input.notes ?? []}</section>`;
}

/** A note when a network that takes one item per post is given more. */
export function extraItems(input: { items: unknown[] }, network: string) {
  const extra = input.items.length - 1;
  return extra > 0
    ? note(
        `${network} takes one item per post: the ${extra === 1 ? "next item is" : `next ${extra} items are`} not part of it.`,
      )
    : null;
}

/** True for a text that renders nothing. */
export function isBlank(text: string): boolean {
  return text.trim() === "";
}

export { html, Markup };
