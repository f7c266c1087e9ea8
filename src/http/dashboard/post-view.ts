import { DateTime } from "luxon";
import { LOCAL_DATE_TIME, localTimeInZone } from "../../lib/local-time.ts";
import { html, type Markup } from "../pages/html.ts";
import type { Post } from "./api-resources.ts";
import { badge } from "./ui.ts";

/** The contract's listing views, with the words of their tabs and empty states. */
export const POST_VIEWS: { id: string; label: string; empty: string }[] = [
  { id: "all", label: "All", empty: "No posts yet. Write one with New post." },
  { id: "drafts", label: "Drafts", empty: "No drafts." },
  { id: "scheduled", label: "Scheduled", empty: "Nothing is scheduled or on its way." },
  { id: "published", label: "Published", empty: "Nothing has been published yet." },
  { id: "attention", label: "Needs attention", empty: "No post needs your attention." },
  { id: "failed", label: "Failed", empty: "No post failed." },
];

const TONES: Record<string, "ok" | "warn" | "danger" | "neutral"> = {
  published: "ok",
  preparing: "warn",
  scheduled: "warn",
  ready: "warn",
  processing: "warn",
  "awaiting-provider": "warn",
  failed: "danger",
  "needs-attention": "danger",
  missed: "danger",
};

/** A post's state as a badge, coloured by what it asks of the person. */
export function stateBadge(state: string): Markup {
  return badge(state, TONES[state] ?? "neutral");
}

/** The first text of a post, cut to `length` characters at a word where it can be. */
export function excerpt(post: Pick<Post, "payload">, length = 80): string {
  const text = (post.payload.body[0] ?? post.payload.headline ?? "").replace(/\s+/g, " ").trim();
  if (!text) return "(no text)";
  if (text.length <= length) return text;
  const cut = text.slice(0, length);
  const space = cut.lastIndexOf(" ");
  return `${(space > length / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}

/** Where a post goes: its network and, once it has one, the destination's name. */
export function whereTo(post: Pick<Post, "channel" | "destination">): string {
  return post.destination ? `${post.channel} · ${post.destination.display_name}` : post.channel;
}

/** The time that matters for a post in a list: when it went out, else when it is due. */
export function postTime(post: Pick<Post, "published_at" | "scheduled_at">): string | null {
  return post.published_at ?? post.scheduled_at;
}

/** The dashboard path of a post, and of a workspace's section. */
export function postPath(workspaceId: string, postId: string): string {
  return `/dashboard/workspaces/${workspaceId}/posts/${postId}`;
}

/** An instant as the value of a `datetime-local` control in `zone` (minutes precision). */
export function toLocalInput(at: string | null, zone: string): string {
  if (!at) return "";
  return DateTime.fromISO(at, { zone: "utc" }).setZone(zone).toFormat("yyyy-MM-dd'T'HH:mm");
}

/**
 * A `datetime-local` value read in `zone` → the ISO instant with its UTC offset that the API wants,
 * or what is wrong with it: not a date and time, or a time the zone skips (a time it has twice is
 * the first: `localTimeInZone`).
 */
export function fromLocalInput(value: string, zone: string): { iso: string } | { problem: string } {
  if (!LOCAL_DATE_TIME.test(value)) return { problem: "Enter a date and time." };
  const zoned = localTimeInZone(value, zone);
  return zoned.ok ? { iso: zoned.iso } : { problem: `${zoned.detail}; choose another time.` };
}

/** A short "what you can do" line per state, shown on a post's page. */
export function stateHint(post: Pick<Post, "state" | "retry_safety">): Markup | string {
  switch (post.state) {
    case "needs-attention":
    case "missed":
      return post.retry_safety === "unsafe"
        ? html`The last attempt's outcome is unknown: the post <strong>may already be on the network</strong>.
Check there before you send it again.`
        : "Send it again, move it to a new time, or cancel it.";
    case "failed":
      return "Send it again (after fixing what the network refused) or move it to a new time.";
    default:
      return "";
  }
}
