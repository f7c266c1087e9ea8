// X's text rules: the URL rule of the contract (X bodies carry no URLs) and X's weighted length
// (twitter-text configuration v3), written from the published rules rather than the library.

/** A URL as X finds one in text (scheme, `www.` or a bare domain with a common TLD). */
const COMMON_TLDS = "com|org|net|io|co|dev|app|ly|me|gg|xyz|info|biz|us|uk|de|fr";
const URL_IN_TEXT = new RegExp(
  String.raw`\b(?:https?:\/\/|www\.)\S+|\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:${COMMON_TLDS})(?:\/\S*)?\b`,
  "i",
);

/** Whether the text holds something X would turn into a link (the contract refuses URLs in X bodies). */
export function containsUrl(text: string): boolean {
  return URL_IN_TEXT.test(text);
}

/** Longest post of a standard (non-Premium) account, in weighted characters. */
export const X_MAX_WEIGHTED_LENGTH = 280;

/** Code point ranges that weigh 1 (Latin, Greek, Cyrillic, … and some punctuation); all others weigh 2. */
const LIGHT_RANGES: [number, number][] = [
  [0, 4351],
  [8192, 8205],
  [8208, 8223],
  [8242, 8247],
];

/** Pictographs, flags (regional indicators) and keycaps: what makes a grapheme an emoji. */
const EMOJI_PART = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u;

let segmenter: Intl.Segmenter | null = null;

function isLight(codePoint: number): boolean {
  return LIGHT_RANGES.some(([from, to]) => codePoint >= from && codePoint <= to);
}

/**
 * Length of a post as X counts it (twitter-text v3): the text is NFC-normalised; an emoji cluster
 * (skin tones, ZWJ families, flags, keycaps) weighs 2 whatever its code points; every other code
 * point weighs 1 in the light ranges and 2 elsewhere (CJK, most symbols). Trap: a pictograph with
 * text presentation that sits in a light range alone ("©") weighs 1, "©️" (with U+FE0F) weighs 2.
 */
export function xWeightedLength(text: string): number {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  let weight = 0;
  for (const { segment } of segmenter.segment(text.normalize("NFC"))) {
    const codePoints = [...segment].map((c) => c.codePointAt(0)!);
    const single = codePoints.length === 1 && isLight(codePoints[0]!);
    if (EMOJI_PART.test(segment) && !single) {
      weight += 2;
      continue;
    }
    for (const codePoint of codePoints) weight += isLight(codePoint) ? 1 : 2;
  }
  return weight;
}
