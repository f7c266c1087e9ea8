import { randomBase62 } from "../../lib/crypto.ts";
import { localTimeInZone } from "../../lib/local-time.ts";
import type { FieldErrors } from "./api.ts";
import type { NetworkOptions } from "./compose-networks.ts";

// The compose form's state (what the person typed, read back from the form on every round trip), the
// Create Post body made of it, and the way the API's error pointers find their way back to its fields.

/** How the post is sent: a draft, now, at a local time, or in the next queue window. */
export type WhenChoice = "draft" | "now" | "at" | "queue";

/** One body item of the thread and the assets attached to it. */
export interface ComposeItem {
  text: string;
  media: string[];
}

/** Everything the form holds. */
export interface ComposeState {
  /** The post group (one per compose form, kept across round trips). */
  group: string;
  destinationIds: string[];
  items: ComposeItem[];
  when: WhenChoice;
  /** The `datetime-local` value, in the workspace's time zone. */
  at: string;
  /** The per-network option fields as typed (`opt_<channel>_<key>` → values). */
  options: Map<string, string[]>;
  /** Each attached image's alt text (`alt_<asset id>`), sent to every chosen network that takes it. */
  alt: Map<string, string>;
  /** "Publish links as written": this post's URLs are not tracked (`link_tracking: false`). */
  untracked: boolean;
  /** Recycling as typed: every how many days, how many copies, variations split by `---` lines. */
  recycle: { every: string; count: string; variations: string };
}

/** A destination as compose uses it. */
export interface ComposeDestination {
  id: string;
  channel: string;
  name: string;
  status: string;
  isDefault: boolean;
  /** Its network's name ("Bluesky"). */
  networkName: string;
  /** Its network's option fields (compose-networks.ts), null when the network takes none. */
  network: NetworkOptions | null;
}

/** The form field of an option and of an asset's alt text. */
export const optionName = (channel: string, key: string) => `opt_${channel}_${key}`;
export const altName = (channel: string, assetId: string) => `opt_${channel}_alt_${assetId}`;
/** The one alt text field of an attached asset (a network's own `altName` field, if sent, wins). */
export const sharedAltName = (assetId: string) => `alt_${assetId}`;

const WHEN_CHOICES: WhenChoice[] = ["draft", "now", "at", "queue"];
const MAX_ITEMS = 100;

/** A fresh form: one empty item, the default destinations chosen. */
export function emptyState(destinations: ComposeDestination[], at = ""): ComposeState {
  return {
    group: `dash-${randomBase62(16)}`,
    destinationIds: destinations.filter((d) => d.isDefault && d.status === "ready").map((d) => d.id),
    items: [{ text: "", media: [] }],
    when: at ? "at" : "draft",
    at,
    options: new Map(),
    alt: new Map(),
    untracked: false,
    recycle: { every: "", count: "", variations: "" },
  };
}

/** Reads the form back (items are numbered `item_<n>_…`, in order). */
export function readState(form: URLSearchParams): ComposeState {
  const count = Math.min(MAX_ITEMS, Math.max(1, Number(form.get("item_count")) || 1));
  const items: ComposeItem[] = [];
  for (let n = 0; n < count; n++) {
    const media = form.getAll(`item_${n}_media`).filter((id) => /^[A-Za-z0-9_-]{1,200}$/.test(id));
    items.push({
      text: (form.get(`item_${n}_text`) ?? "").replace(/\r\n/g, "\n"),
      media: [...new Set(media)],
    });
  }
  const when = form.get("when") as WhenChoice;
  const group = form.get("group") ?? "";
  const options = new Map<string, string[]>();
  for (const [name] of form)
    if (name.startsWith("opt_") && !options.has(name)) options.set(name, form.getAll(name));
  const alt = new Map<string, string>();
  for (const id of new Set(items.flatMap((i) => i.media))) {
    const text = form.get(sharedAltName(id));
    if (text !== null) alt.set(id, text.replace(/\r\n/g, "\n").slice(0, 5000));
  }
  return {
    group: /^[A-Za-z0-9_-]{1,200}$/.test(group) ? group : `dash-${randomBase62(16)}`,
    destinationIds: [...new Set(form.getAll("destination_ids"))],
    items,
    when: WHEN_CHOICES.includes(when) ? when : "draft",
    at: (form.get("at") ?? "").slice(0, 32),
    options,
    alt,
    untracked: form.get("link_tracking") === "off",
    recycle: {
      every: (form.get("recycle_every") ?? "").trim().slice(0, 16),
      count: (form.get("recycle_count") ?? "").trim().slice(0, 16),
      variations: (form.get("recycle_variations") ?? "").replace(/\r\n/g, "\n"),
    },
  };
}

/** The `destination_options` of one channel from the typed fields (empty fields are left out). */
function optionsOf(state: ComposeState, network: NetworkOptions | null): Record<string, unknown> | null {
  if (!network) return null;
  const channel = network.channel;
  const out: Record<string, unknown> = {};
  const one = (key: string) => (state.options.get(optionName(channel, key))?.[0] ?? "").trim();
  for (const field of network.fields) {
    const value = one(field.key);
    if (field.kind === "flags") {
      const chosen = state.options.get(optionName(channel, field.key)) ?? [];
      if (chosen.length) out[field.key] = chosen;
    } else if (field.kind === "flag") {
      if (value) out[field.key] = true;
    } else if (value === "") {
      continue;
    } else if (field.kind === "yesno") {
      out[field.key] = value === "yes";
    } else if (field.kind === "text" && field.list) {
      out[field.key] = value
        .split(",")
        .map((v) => v.trim())
        .filter(Boolean);
    } else if (field.kind === "text" && field.integer) {
      out[field.key] = /^\d{1,15}$/.test(value) ? Number(value) : value;
    } else {
      out[field.key] = value;
    }
  }
  if (network.altText) {
    const alt: Record<string, string> = {};
    for (const id of new Set(state.items.flatMap((i) => i.media))) {
      const own = state.options.get(altName(channel, id))?.[0];
      const text = (own ?? state.alt.get(id) ?? "").trim();
      if (text) alt[id] = text;
    }
    if (Object.keys(alt).length) out.alt_text_by_asset_id = alt;
  }
  return Object.keys(out).length ? out : null;
}

/**
 * `recycle` of the form, or null when neither number is filled in: a number as typed when it is not
 * one (the API names the field), each variation a one-item body, variations split by `---` lines.
 */
function recycleOf(state: ComposeState): Record<string, unknown> | null {
  const { every, count, variations } = state.recycle;
  if (every === "" && count === "") return null;
  const number = (value: string) => (/^\d{1,6}$/.test(value) ? Number(value) : value);
  const texts = variations
    .split(/^---$/m)
    .map((v) => v.trim())
    .filter(Boolean);
  return {
    every_days: number(every),
    count: number(count),
    ...(texts.length ? { variations: texts.map((text) => [text]) } : {}),
  };
}

/**
 * A `datetime-local` value in a time zone as an instant with its offset, or null (not a date and
 * time, or one the zone skips; a time it has twice is the first: `localTimeInZone`).
 */
export function localToInstant(at: string, timeZone: string): string | null {
  const zoned = localTimeInZone(at, timeZone);
  return zoned.ok ? zoned.iso : null;
}

/** The Create Post body of the form (`at` already checked), one post per chosen destination. */
export function createBody(state: ComposeState, chosen: ComposeDestination[], timeZone: string) {
  const when = state.when === "at" ? localToInstant(state.at, timeZone)! : state.when;
  const mediaItems = state.items.flatMap((item, index) =>
    item.media.map((asset_id) => ({ asset_id, item_index: index })),
  );
  const recycle = recycleOf(state);
  return {
    when,
    ...(state.when === "draft" ? {} : { confirmed: true }),
    ...(state.when === "now" || state.when === "at" ? { time_zone: timeZone } : {}),
    group: state.group,
    posts: chosen.map((d) => {
      const options = optionsOf(state, d.network);
      return {
        destination_id: d.id,
        body: state.items.map((i) => i.text),
        ...(mediaItems.length ? { media_items: mediaItems } : {}),
        ...(options ? { destination_options: { [d.channel]: options } } : {}),
        ...(recycle ? { recycle } : {}),
        ...(state.untracked ? { link_tracking: false } : {}),
      };
    }),
  };
}

/**
 * The API's errors on the form's fields: `/posts/<i>/…` names the i-th chosen destination (its name
 * prefixes the detail), its body items, media and options are the form's items and option fields; a
 * pointer with no field of its own lands on the nearest enclosing one. What has no place is returned
 * apart, for the summary.
 */
export function formErrors(
  errors: { pointer?: string; detail?: string }[],
  context: { state: ComposeState; chosen: ComposeDestination[]; fields: Set<string> },
): { fields: FieldErrors; other: string[] } {
  const { state, chosen, fields } = context;
  const mediaItem = state.items.flatMap((item, index) => item.media.map(() => index));
  const out: FieldErrors = new Map();
  const other: string[] = [];
  for (const e of errors) {
    const pointer = e.pointer ?? "";
    let detail = e.detail ?? "is not valid";
    let target: string | null = null;
    const post = /^\/posts\/(\d+)(\/.*)?$/.exec(pointer);
    if (post) {
      const destination = chosen[Number(post[1])];
      if (destination) detail = `${destination.name}: ${detail}`;
      const rest = post[2] ?? "";
      const body = /^\/body\/(\d+)/.exec(rest);
      const media = /^\/(?:media_items|media)\/(\d+)/.exec(rest);
      const mediaId = media ? state.items.flatMap((item) => item.media)[Number(media[1])] : undefined;
      const options = /^\/destination_options\/([a-z]+)(\/.*)?$/.exec(rest);
      const recycle = /^\/recycle(?:\/(every_days|count|variations))?/.exec(rest);
      if (body) target = `/body/${body[1]}/text`;
      else if (media && /alt text/i.test(detail) && fields.has(`/alt/${mediaId}`)) target = `/alt/${mediaId}`;
      else if (recycle) target = `/recycle${recycle[1] ? `/${recycle[1]}` : ""}`;
      else if (media) target = `/body/${mediaItem[Number(media[1])] ?? 0}/media`;
      else if (options && /^\/alt_text_by_asset_id\/[^/]+$/.test(options[2] ?? ""))
        target = `/alt/${options[2]!.split("/")[2]}`;
      else if (options) target = nearest(`/options/${options[1]}${options[2] ?? ""}`, fields);
      else target = "/destination_ids";
    } else if (pointer === "/posts") target = "/destination_ids";
    else if (pointer === "/when" || pointer === "/time_zone") target = state.when === "at" ? "/at" : "/when";
    else if (pointer === "/confirmed") target = "/when";
    if (target && fields.has(target)) {
      const before = out.get(target);
      out.set(target, before ? `${before}; ${detail}` : detail);
    } else other.push(pointer && !post ? `${pointer}: ${detail}` : detail);
  }
  return { fields: out, other };
}

/** The pointer itself or its closest parent that is a field of the form. */
function nearest(pointer: string, fields: Set<string>): string | null {
  for (let p = pointer; p; p = p.slice(0, p.lastIndexOf("/"))) if (fields.has(p)) return p;
  return null;
}
