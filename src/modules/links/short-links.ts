// Tracked links as text: finding the URLs of a body, the short URL each becomes, the text a network
// receives, and the redirect target with the workspace's UTM parameters.
import type { Herald } from "../../herald.ts";
import { randomBase62 } from "../../lib/crypto.ts";
import type { LinkTrackingSettings } from "./settings.ts";

/** Characters of a short code: 10 base62 characters, about 59 bits, not guessable by trying. */
export const SHORT_CODE_LENGTH = 10;
/** What a short code looks like (anything else is unknown without a database read). */
export const SHORT_CODE = /^[0-9A-Za-z]{10}$/;

const TRAILING_PUNCTUATION = /[.,;:!?"'’”]+$/u;

/** A URL found in a text: its UTF-16 span and the URL as written. */
interface UrlSpan {
  start: number;
  end: number;
  url: string;
}

/** A new random short code. */
export function newShortCode(): string {
  return randomBase62(SHORT_CODE_LENGTH);
}

/** The published URL of a code: `<HERALD_BASE_URL>/l/<code>`. */
export function shortUrl(h: Herald, code: string): string {
  return `${h.config.baseUrl}/l/${code}`;
}

/** Whether a URL is already one of this server's short links (it is left as it is). */
function isShortLink(h: Herald, url: string): boolean {
  return url.startsWith(`${h.config.baseUrl}/l/`);
}

/**
 * The http(s) URLs of a text the way the networks link them: at the start or after whitespace or "(",
 * without trailing punctuation (and without a closing parenthesis the URL did not open).
 */
function urlSpans(text: string): UrlSpan[] {
  const spans: UrlSpan[] = [];
  for (const m of text.matchAll(/(^|[\s(])(https?:\/\/[^\s]+)/gi)) {
    let url = m[2]!.replace(TRAILING_PUNCTUATION, "");
    if (url.endsWith(")") && !url.includes("(")) url = url.slice(0, -1).replace(TRAILING_PUNCTUATION, "");
    if (!URL.canParse(url)) continue;
    const start = m.index + m[1]!.length;
    spans.push({ start, end: start + url.length, url });
  }
  return spans;
}

/** The distinct URLs of a post's body items that become short links. */
export function trackableUrls(h: Herald, body: string[]): string[] {
  const urls = body.flatMap((text) => urlSpans(text).map((s) => s.url));
  return [...new Set(urls.filter((url) => !isShortLink(h, url)))];
}

/** The text with each trackable URL replaced as `replacement` says. */
function replaceUrls(h: Herald, text: string, replacement: (url: string) => string): string {
  let out = "";
  let at = 0;
  for (const span of urlSpans(text)) {
    if (isShortLink(h, span.url)) continue;
    out += text.slice(at, span.start) + replacement(span.url);
    at = span.end;
  }
  return out + text.slice(at);
}

/** The text as published: each URL replaced by its short URL (`links`: URL → short URL). */
export function publishedText(h: Herald, text: string, links: Map<string, string>): string {
  return replaceUrls(h, text, (url) => links.get(url) ?? url);
}

/**
 * The text the length rules judge for a tracked post: every URL replaced by a short URL of the
 * length it will have (codes are made when the post is published; all have the same length).
 */
export function textAsSent(h: Herald, text: string): string {
  return replaceUrls(h, text, () => shortUrl(h, "0".repeat(SHORT_CODE_LENGTH)));
}

/**
 * Where a short link redirects: the URL with the UTM presets added after its own query, each only when
 * the URL has no parameter of that name (the URL's own parameters and fragment are kept as written).
 */
export function redirectTarget(url: string, settings: LinkTrackingSettings | null): string {
  const hash = url.indexOf("#");
  const fragment = hash < 0 ? "" : url.slice(hash);
  const beforeFragment = hash < 0 ? url : url.slice(0, hash);
  const question = beforeFragment.indexOf("?");
  const query = question < 0 ? "" : beforeFragment.slice(question + 1);
  const present = new URLSearchParams(query);
  const added: string[] = [];
  for (const name of ["utm_source", "utm_medium", "utm_campaign"] as const) {
    const value = settings?.[name];
    if (value && !present.has(name)) added.push(`${name}=${encodeURIComponent(value)}`);
  }
  if (added.length === 0) return url;
  const separator = question < 0 ? "?" : query === "" || query.endsWith("&") ? "" : "&";
  return `${beforeFragment}${separator}${added.join("&")}${fragment}`;
}
