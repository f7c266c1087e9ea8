import { countGraphemes, utf8Length } from "../text.ts";

/** A rich-text facet of an `app.bsky.feed.post`: UTF-8 byte range plus one feature. */
export interface Facet {
  index: { byteStart: number; byteEnd: number };
  features: (
    | { $type: "app.bsky.richtext.facet#link"; uri: string }
    | { $type: "app.bsky.richtext.facet#mention"; did: string }
    | { $type: "app.bsky.richtext.facet#tag"; tag: string }
  )[];
}

/** A span found in the text, before mentions are resolved to DIDs. */
export type FacetCandidate =
  | { kind: "link"; start: number; end: number; uri: string }
  | { kind: "mention"; start: number; end: number; handle: string }
  | { kind: "tag"; start: number; end: number; tag: string };

const TRAILING_PUNCTUATION = /[.,;:!?"'’”]+$/u;
const HANDLE = /^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$/i;

/**
 * Finds http(s) links, @handle mentions and #tags the way Bluesky clients do (start of text or after
 * whitespace or "("; trailing punctuation is not part of the span). Offsets are UTF-16 indexes.
 */
export function findFacetCandidates(text: string): FacetCandidate[] {
  const found: FacetCandidate[] = [];
  for (const m of text.matchAll(/(^|[\s(])(https?:\/\/[^\s]+)/gi)) {
    let uri = m[2]!.replace(TRAILING_PUNCTUATION, "");
    if (uri.endsWith(")") && !uri.includes("(")) uri = uri.slice(0, -1).replace(TRAILING_PUNCTUATION, "");
    if (!URL.canParse(uri)) continue;
    const start = m.index + m[1]!.length;
    found.push({ kind: "link", start, end: start + uri.length, uri });
  }
  for (const m of text.matchAll(/(^|[\s(])@([a-z0-9.-]+)/gi)) {
    const handle = m[2]!.replace(/\.+$/, "");
    if (!HANDLE.test(handle)) continue;
    const start = m.index + m[1]!.length;
    found.push({ kind: "mention", start, end: start + 1 + handle.length, handle: handle.toLowerCase() });
  }
  for (const m of text.matchAll(/(^|\s)[#＃]([^\s#＃]+)/gu)) {
    const tag = m[2]!.replace(/\p{P}+$/u, "");
    if (tag === "" || /^\d+$/.test(tag) || countGraphemes(tag) > 64) continue;
    const start = m.index + m[1]!.length;
    found.push({ kind: "tag", start, end: start + 1 + tag.length, tag });
  }
  return found.sort((a, b) => a.start - b.start);
}

/**
 * Builds the facets with UTF-8 byte offsets; `resolveHandle` gives a mention's DID or null, and a
 * mention that does not resolve gets no facet (it stays plain text).
 */
export async function buildFacets(input: {
  text: string;
  resolveHandle: (handle: string) => Promise<string | null>;
}): Promise<Facet[]> {
  const facets: Facet[] = [];
  for (const c of findFacetCandidates(input.text)) {
    const index = {
      byteStart: utf8Length(input.text.slice(0, c.start)),
      byteEnd: utf8Length(input.text.slice(0, c.end)),
    };
    if (c.kind === "link")
      facets.push({ index, features: [{ $type: "app.bsky.richtext.facet#link", uri: c.uri }] });
    if (c.kind === "tag")
      facets.push({ index, features: [{ $type: "app.bsky.richtext.facet#tag", tag: c.tag }] });
    if (c.kind === "mention") {
      const did = await input.resolveHandle(c.handle);
      if (did) facets.push({ index, features: [{ $type: "app.bsky.richtext.facet#mention", did }] });
    }
  }
  return facets;
}
