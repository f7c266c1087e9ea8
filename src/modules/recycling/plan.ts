// `recycle` of a Create Post item: checked like the post's own body, stored as the original's plan.
import type { FieldError } from "../../core/problem.ts";
import type { RecyclePlan } from "../../db/recycle-plan.ts";
import type { Herald } from "../../herald.ts";
import type { DestinationRow } from "../destinations/repo.ts";
import type { AssetRow } from "../posts/repo.ts";
import { draftWarnings, publicationErrors, type PostContent } from "../posts/rules.ts";

/** `recycle` as the request gives it. */
export interface RecycleInput {
  every_days: number;
  count: number;
  variations?: string[][];
}

/** The plan stored on the original (no variations: copies repeat the original body). */
export function recyclePlanOf(input: RecycleInput | undefined): RecyclePlan | null {
  if (!input) return null;
  return { every_days: input.every_days, count: input.count, variations: input.variations ?? [] };
}

/** What a request's `recycle` gets: by problem code, and (drafts) what publishing would refuse. */
export interface RecycleFindings {
  invalid: FieldError[];
  unpublishable: FieldError[];
  warnings: FieldError[];
}

/**
 * Checks `recycle` of the item at `base`: refused on a network that flags repeats; each variation
 * is checked by the rules the post's own body is (its media stay on the items they are attached
 * to, so a variation needs those items), errors pointing at `<base>/recycle/variations/<v>/<item>`.
 * A draft's variations, like its body, only warn of what publishing would refuse.
 */
export function recycleFindings(args: {
  h: Herald;
  input: RecycleInput;
  content: PostContent;
  destination: DestinationRow | null;
  assets: Map<string, AssetRow>;
  base: string;
  draft: boolean;
  withWarnings: boolean;
}): RecycleFindings {
  const { h, input, content, destination, assets, base, draft, withWarnings } = args;
  const found: RecycleFindings = { invalid: [], unpublishable: [], warnings: [] };
  const pointer = `${base}/recycle`;
  const network = h.providers.adapter(content.channel);
  if (network?.refusesRepeats) {
    const detail = `${network.displayName} flags repeated posts as duplicates; recycling is not offered there`;
    found.unpublishable.push({ pointer, code: "custom", detail });
    return found;
  }
  for (const [v, body] of (input.variations ?? []).entries()) {
    const at = `${pointer}/variations/${v}`;
    const beyond = content.assetItems.find((a) => a.item_index >= body.length);
    if (beyond) {
      const detail = `has ${body.length} item(s), but the post's media are attached to body item ${beyond.item_index}`;
      found.invalid.push({ pointer: at, code: "custom", detail });
      continue;
    }
    const variation = { ...content, body };
    const errors = draft
      ? withWarnings
        ? draftWarnings(h, variation, destination, assets, base)
        : []
      : destination
        ? publicationErrors(h, variation, destination, assets, base)
        : [];
    // Only what the variation's items get: the destination's and the media's own errors are the post's.
    const items = errors.flatMap((e) =>
      e.pointer.startsWith(`${base}/body/`)
        ? [{ ...e, pointer: `${at}/${e.pointer.slice(`${base}/body/`.length)}` }]
        : [],
    );
    (draft ? found.warnings : found.unpublishable).push(...items);
  }
  return found;
}
