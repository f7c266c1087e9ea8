import { DateTime } from "luxon";
import type { Herald } from "../../herald.ts";
import type { FieldError } from "../../core/problem.ts";
import { isIP } from "node:net";
import { isPrivateAddress } from "../../lib/network-guard.ts";
import { LOCAL_DATE_TIME } from "../../lib/local-time.ts";
import { isIanaTimeZone } from "../../lib/time-zone.ts";
import { networkRules } from "../../providers/registry.ts";
import { textAsSent } from "../links/short-links.ts";
import type { ChannelLimits } from "../../providers/types.ts";
import { destinationStatus, unavailableReason } from "../destinations/present.ts";
import type { DestinationRow } from "../destinations/repo.ts";
import type { AssetRow } from "./repo.ts";

/** One post of a Create Post request (or a draft being published), as the rules see it. */
export interface PostContent {
  channel: string;
  body: string[];
  /** Attached assets with the body item each belongs to and where the request named it. */
  assetItems: { asset_id: string; item_index: number; pointer: string }[];
  destinationOptions: Record<string, Record<string, unknown>>;
  /** Its URLs are published as tracked short links: the length rules judge the text as sent. */
  linkTracking?: boolean;
}

const OFFSET_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i;

/** Parses `when`: a mode, or an ISO 8601 time that carries a UTC offset (else null). */
export function parseWhen(
  when: string,
): { mode: "draft" | "now" | "queue" } | { mode: "exact"; at: number } | null {
  if (when === "draft" || when === "now" || when === "queue") return { mode: when };
  if (!OFFSET_TIMESTAMP.test(when)) return null;
  // Luxon refuses impossible dates (2027-02-30) that Date.parse would roll into March.
  const parsed = DateTime.fromISO(when, { setZone: true });
  return parsed.isValid ? { mode: "exact", at: parsed.toMillis() } : null;
}

/**
 * The detail for a time that is not one the API takes: `expected` says what it takes; a local date
 * and time without an offset (what people type) is told to add one, since `time_zone` does not
 * supply it (the command line and the dashboard read local times in a zone before sending).
 */
export function exactTimeDetail(value: string, expected: string): string {
  if (!LOCAL_DATE_TIME.test(value)) return expected;
  return `${value} has no UTC offset: add one (like ${value}+01:00); time_zone does not supply it`;
}

/** Field errors for a `time_zone` value. */
export function timeZoneErrors(zone: string | undefined, pointer: string): FieldError[] {
  if (zone === undefined || isIanaTimeZone(zone)) return [];
  return [
    { pointer, code: "custom", detail: `"${zone}" is not an IANA time zone name such as "Europe/Berlin"` },
  ];
}

/**
 * Whether networks that pull media by URL can reach Herald's download URLs: HERALD_BASE_URL is an
 * https origin whose host is a name or a public address (a DNS answer is not looked up here), or the
 * test-only private-network allowance is on.
 */
export function publicMediaUrls(h: Herald): boolean {
  if (h.config.devAllowPrivateNetwork) return true;
  const url = new URL(h.config.baseUrl);
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (url.protocol !== "https:" || host === "localhost" || host.endsWith(".localhost")) return false;
  if (!host.includes(".") && !host.includes(":")) return false; // a single-label intranet name
  return !(isIP(host) && isPrivateAddress(host));
}

/** Structural checks that hold for drafts too: options belong to the channel, media indexes exist. */
export function contentErrors(content: PostContent, base: string): FieldError[] {
  const errors: FieldError[] = [];
  for (const key of Object.keys(content.destinationOptions)) {
    if (key !== content.channel)
      errors.push({
        pointer: `${base}/destination_options/${key}`,
        code: "custom",
        detail: `options for ${key} do not apply to a ${content.channel} post`,
      });
  }
  const options = content.destinationOptions[content.channel];
  const rules = networkRules(content.channel);
  if (options && rules?.checkOptions) {
    const assetIds = content.assetItems.map((a) => a.asset_id);
    for (const problem of rules.checkOptions({ options, assetIds })) {
      errors.push({
        pointer: `${base}/destination_options/${content.channel}${problem.pointer}`,
        code: "custom",
        detail: problem.detail,
      });
    }
  }
  for (const item of content.assetItems) {
    if (item.item_index >= content.body.length)
      errors.push({
        pointer: item.pointer,
        code: "custom",
        detail: `there is no body item ${item.item_index}`,
      });
  }
  return errors;
}

/**
 * Why a post cannot be published to a destination (the 422 `errors[]`): unavailable destination,
 * unknown assets, empty items, and whatever the network's own rules refuse (text or media over its
 * limits, URLs on X, threads where the network has none).
 */
export function publicationErrors(
  h: Herald,
  content: PostContent,
  destination: DestinationRow,
  assets: Map<string, AssetRow>,
  base: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const status = destinationStatus(h, destination);
  if (status !== "ready") {
    const detail =
      status === "disabled"
        ? "the destination is disabled"
        : `the destination is unavailable (${unavailableReason(h, destination)})`;
    errors.push({ pointer: `${base}/destination_id`, code: "custom", detail });
  }
  return onePerPointer([...errors, ...contentPublicationErrors(h, content, destination, assets, base)]);
}

/**
 * What publishing a draft would refuse (the draft itself is stored): the checks of
 * `publicationErrors` against its destination, or, for a draft that names only its channel, against
 * the network's default limits.
 */
export function draftWarnings(
  h: Herald,
  content: PostContent,
  destination: DestinationRow | null,
  assets: Map<string, AssetRow>,
  base: string,
): FieldError[] {
  if (destination) return publicationErrors(h, content, destination, assets, base);
  const network = h.providers.adapter(content.channel);
  if (!network) return [];
  const account = { limits: network.defaultLimits, externalId: "" };
  return onePerPointer(contentPublicationErrors(h, content, account, assets, base));
}

/** The checks of a post's content against the network's rules and the account's limits. */
function contentPublicationErrors(
  h: Herald,
  content: PostContent,
  account: { limits: unknown; externalId: string },
  assets: Map<string, AssetRow>,
  base: string,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const item of content.assetItems) {
    if (!assets.has(item.asset_id))
      errors.push({
        pointer: item.pointer,
        code: "custom",
        detail: `no asset ${item.asset_id} in this workspace`,
      });
  }
  const rules = h.providers.adapter(content.channel);
  if (rules && !rules.supportsThreads) {
    // Each later item is refused where it is, so a client can highlight exactly what to remove.
    for (let index = 1; index < content.body.length; index++)
      errors.push({
        pointer: `${base}/body/${index}`,
        code: "custom",
        detail: `${rules.displayName} does not publish threads; only body item 0 can be sent`,
      });
  }
  const firstComment = content.destinationOptions[content.channel]?.first_comment;
  if (typeof firstComment === "string" && rules?.checkFirstComment) {
    const pointer = `${base}/destination_options/${content.channel}/first_comment`;
    for (const detail of rules.checkFirstComment(firstComment))
      errors.push({ pointer, code: "custom", detail });
  }
  content.body.forEach((text, index) => {
    const pointer = `${base}/body/${index}`;
    const attached = content.assetItems.filter((a) => a.item_index === index && assets.has(a.asset_id));
    const media = attached.map((a) => mediaFactsOf(assets.get(a.asset_id)!));
    if (text.trim() === "" && media.length === 0)
      errors.push({ pointer, code: "custom", detail: "is empty and has no media" });
    if (rules?.checkItem) {
      for (const problem of rules.checkItem({
        text: content.linkTracking ? textAsSent(h, text) : text,
        media,
        options: content.destinationOptions[content.channel] ?? {},
        limits: account.limits as ChannelLimits,
        publicMediaUrls: publicMediaUrls(h),
        externalId: account.externalId,
      })) {
        // An adapter points at "/media/<n>" of the item: translate that to where the request named the asset.
        const mediaIndex = /^\/media\/(\d+)/.exec(problem.pointer);
        const target =
          problem.option !== undefined
            ? `${base}/destination_options/${content.channel}${problem.option}`
            : mediaIndex
              ? (attached[Number(mediaIndex[1])]?.pointer ?? pointer)
              : `${pointer}${problem.pointer}`;
        errors.push({ pointer: target, code: "custom", detail: problem.detail });
      }
    }
  });
  return errors;
}

/** One counter of a post_validation's `lengths`: a body item's text by one of its network's counts. */
export interface TextLength {
  pointer: string;
  channel: string;
  destination_id: string | null;
  used: number;
  limit: number;
  unit: "characters" | "bytes";
}

/**
 * Every body item's text length by the network's own counts (`measureText`, the counts `checkItem`
 * refuses over), against the destination's limits or, for a draft naming only its channel, the
 * network's defaults: the counters a composer shows beside each item.
 */
export function textLengths(
  h: Herald,
  content: PostContent,
  destination: DestinationRow | null,
  assets: Map<string, AssetRow>,
  base: string,
): TextLength[] {
  const network = h.providers.adapter(content.channel);
  if (!network?.measureText) return [];
  const limits = (destination ? destination.limits : network.defaultLimits) as ChannelLimits;
  return content.body.flatMap((text, index) => {
    const media = content.assetItems
      .filter((a) => a.item_index === index && assets.has(a.asset_id))
      .map((a) => mediaFactsOf(assets.get(a.asset_id)!));
    const input = {
      // The counters count what will be sent: a tracked post's URLs as its short links.
      text: content.linkTracking ? textAsSent(h, text) : text,
      media,
      options: content.destinationOptions[content.channel] ?? {},
      limits,
      publicMediaUrls: publicMediaUrls(h),
      externalId: destination?.externalId ?? "",
    };
    return network.measureText!(input).map((m) => ({
      pointer: `${base}/body/${index}`,
      channel: content.channel,
      destination_id: destination?.id ?? null,
      ...m,
    }));
  });
}

/** An asset as the networks' checks see it. */
function mediaFactsOf(asset: AssetRow) {
  return {
    assetId: asset.id,
    contentType: asset.contentType,
    byteSize: asset.byteSize,
    width: asset.width,
    height: asset.height,
    durationSec: asset.durationSec,
    altText: null,
  };
}

/** Herald's own check and the adapter's may both refuse the same item: one entry per pointer. */
function onePerPointer(errors: FieldError[]): FieldError[] {
  const seen = new Set<string>();
  return errors.filter((e) => !seen.has(e.pointer) && (seen.add(e.pointer), true));
}
