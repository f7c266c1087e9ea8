// Made on first use: building it loads ICU's segmentation data, which a server that never counts text
// (or not yet) does not need at start.
let segmenter: Intl.Segmenter | null = null;
const encoder = new TextEncoder();

/** User-perceived characters (extended grapheme clusters): "👍🏽" and "é" as e + accent are one each. */
export function countGraphemes(text: string): number {
  let count = 0;
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (const _ of segmenter.segment(text)) count++;
  return count;
}

/** Length of the text in UTF-8 bytes. */
export function utf8Length(text: string): number {
  return encoder.encode(text).length;
}

/** The string values of an option that should be a list of strings (anything else is ignored). */
export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : [];
}

/**
 * `alt_text_by_asset_id` entries (Bluesky, X, Threads) that name an asset the post does not attach,
 * as option problems (pointers relative to the channel's options).
 */
export function unattachedAltTextProblems(
  options: Record<string, unknown>,
  assetIds: string[],
): { pointer: string; detail: string }[] {
  const byId = (options.alt_text_by_asset_id as Record<string, unknown> | undefined) ?? {};
  return Object.keys(byId)
    .filter((id) => !assetIds.includes(id))
    .map((id) => ({
      pointer: `/alt_text_by_asset_id/${id}`,
      detail: "names an asset that is not attached to the post",
    }));
}
