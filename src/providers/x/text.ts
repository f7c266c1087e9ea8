// X's text rules through twitter-text, X's reference implementation: what X turns into a link (with
// X's list of TLDs) for the contract's rule that X bodies carry no URLs, and the weighted length
// (configuration v3: CJK 2, emoji 2, a link 23) with the characters X refuses.
import type * as TwitterText from "twitter-text";

/** Longest post of a standard (non-Premium) account, in weighted characters. */
export const X_MAX_WEIGHTED_LENGTH = 280;

// twitter-text is ~240 modules (its TLD regexes, twemoji-parser, core-js helpers): loaded with the
// first X body checked, not at start-up (test/startup-lazy-loading.test.ts). `require` keeps the
// checks synchronous for their callers, and `bun build --compile` still bundles it.
let library: typeof TwitterText | null = null;

function twitterText(): typeof TwitterText {
  library ??= require("twitter-text") as typeof TwitterText;
  return library;
}

// An address written with its scheme is a URL in the contract's sense even where X would not link it
// (`http://localhost:3000`, an IP address, a reserved TLD such as `.test`).
const SCHEME_URL = /\bhttps?:\/\/[^\s/?#]\S*/gi;

/** What X makes of a body: the URLs in it, its weighted length, and whether it has characters X refuses. */
export interface XTextFacts {
  urls: string[];
  weightedLength: number;
  refusedCharacters: boolean;
}

// twitter-text's URL pattern is slower than linear on long runs of domain labels ("a.a.a.…": 1,600
// characters take half a second, 30,000 minutes), so it never sees more than a bounded piece: text
// is given in chunks cut after whitespace, and a run without whitespace longer than RUN_PIECE is cut
// into pieces (at grapheme boundaries) looked at two by two. Exact for any text without such a run.
const CHUNK = 512;
const RUN_PIECE = 32;
/** What a link counts, whatever its length (X's t.co links). */
const X_URL_WEIGHT = 23;

/**
 * The facts of a text as X sees it. `urls` are what X would link (twitter-text's extractor: with or
 * without a scheme, a domain with one of X's TLDs, `t.co` links; not `@user`, `#tag`, `1.5` or an
 * e-mail address), or when X links none, the addresses written with an http(s) scheme. `weightedLength` is
 * twitter-text's: NFC-normalised, each URL 23, an emoji cluster 2, code points in X's light ranges 1,
 * all others 2. `refusedCharacters`: U+FFFE, U+FEFF or U+FFFF, which X's validity check refuses.
 */
export function xTextFacts(text: string): XTextFacts {
  const { parseTweet, extractUrlsWithIndices, hasInvalidCharacters } = twitterText();
  const urls: string[] = [];
  let weightedLength = 0;
  let chunk = "";
  const flush = () => {
    if (chunk === "") return;
    weightedLength += parseTweet(chunk).weightedLength;
    for (const { url } of extractUrlsWithIndices(chunk)) urls.push(url);
    chunk = "";
  };
  for (const [token] of text.matchAll(/\s+|\S+/g)) {
    if (token.length > RUN_PIECE && /\S/.test(token)) {
      flush();
      const pieces = runPieces(token);
      const found = runUrls(pieces, extractUrlsWithIndices);
      // A run's weight without links (with no `.` no domain is found; `,` weighs what `.` does), then
      // each link found counts 23 instead of its characters.
      const unlinked = (part: string) => parseTweet(part.replaceAll(".", ",")).weightedLength;
      for (const piece of pieces) weightedLength += unlinked(piece);
      for (const url of found) weightedLength += X_URL_WEIGHT - unlinked(url);
      urls.push(...found);
      continue;
    }
    if (chunk.length + token.length > CHUNK) flush();
    chunk += token;
  }
  flush();
  if (urls.length === 0) for (const [url] of text.matchAll(SCHEME_URL)) urls.push(url);
  return { urls, weightedLength, refusedCharacters: hasInvalidCharacters(text) };
}

// Made on first use, like text.ts's segmenter (which counts graphemes for the rules).
let graphemes: Intl.Segmenter | null = null;

/** A run without whitespace cut into pieces of at most RUN_PIECE UTF-16 units, never inside a grapheme. */
function runPieces(run: string): string[] {
  graphemes ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  const pieces: string[] = [];
  let piece = "";
  for (const { segment } of graphemes.segment(run)) {
    if (piece !== "" && piece.length + segment.length > RUN_PIECE) {
      pieces.push(piece);
      piece = "";
    }
    piece += segment;
  }
  pieces.push(piece);
  return pieces;
}

/**
 * The URLs of a long run, looked for in each pair of neighbouring pieces. A match that starts where
 * the pair starts after a cut is dropped (what preceded it is unseen: `@` makes a mention). One that
 * ends where the pair ends before a cut is kept only when its host is complete (a `/`, `?`, `#` or
 * `:` follows it), else `ipsum.do|lor` would look like a link to `.do`; it then runs to the end of
 * the run (a URL has no whitespace), so a long link is one link.
 */
function runUrls(pieces: string[], extract: typeof TwitterText.extractUrlsWithIndices): string[] {
  const run = pieces.join("");
  const urls: string[] = [];
  let covered = 0;
  let offset = 0;
  for (let i = 0; i < Math.max(1, pieces.length - 1); i++) {
    const pair = pieces[i]! + (pieces[i + 1] ?? "");
    const cutBefore = i > 0;
    const cutAfter = i + 2 < pieces.length;
    for (const { url, indices } of extract(pair)) {
      const start = offset + indices[0];
      if ((cutBefore && indices[0] === 0) || start < covered) continue;
      let end = offset + indices[1];
      if (cutAfter && indices[1] === pair.length) {
        if (!HOST_COMPLETE.test(url)) continue;
        end = run.length;
      }
      urls.push(run.slice(start, end));
      covered = end;
    }
    offset += pieces[i]!.length;
  }
  return urls;
}

const HOST_COMPLETE = /^(?:[a-z][a-z0-9+.-]*:\/\/)?[^/?#:]+[/?#:]/i;
