// What tracked links do: make a post's short links when it is published (once: a retry or a resumed
// run reads the same ones), follow a short link (counting the click), and list a post's links.
import { DateTime } from "luxon";
import { newId } from "../../db/ids.ts";
import { inLockedTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { iso } from "../../lib/clock.ts";
import type { PostRow } from "../posts/repo.ts";
import { findWorkspaceById } from "../workspaces/repo.ts";
import {
  addClick,
  clicksOfLinks,
  findLinkByCode,
  insertMissingLinks,
  listPostLinks,
  type TrackedLinkRow,
} from "./repo.ts";
import { newShortCode, redirectTarget, SHORT_CODE, shortUrl, trackableUrls } from "./short-links.ts";

/**
 * The short URL of each URL of a tracked post (URL → short URL), or null when none is rewritten.
 * The links are stored before the first network call and never changed, so every retry and every
 * run resumed after a crash sends the same text. Their UTM target is the workspace's presets now.
 */
export async function shortLinksForPublishing(h: Herald, post: PostRow): Promise<Map<string, string> | null> {
  if (!post.linkTracking) return null;
  const urls = trackableUrls(h, post.body);
  if (urls.length === 0) return null;
  let links = await listPostLinks(h.db, post.id);
  // A new code colliding with another link's (1 in 62^10) leaves its URL without a row: try again.
  for (let round = 0; round < 3 && missing(links, urls).length > 0; round++) {
    const workspace = await findWorkspaceById(h.db, post.workspaceId);
    const now = h.clock.now();
    const rows: TrackedLinkRow[] = missing(links, urls).map((url) => ({
      id: newId("lnk"),
      code: newShortCode(),
      workspaceId: post.workspaceId,
      postId: post.id,
      url,
      target: redirectTarget(url, workspace?.linkTracking ?? null),
      createdAt: now,
    }));
    // Held by the unique (post, url) index: a second writer's row is skipped, both read the first's.
    links = await inLockedTransaction(h.db, async (tx) => {
      await insertMissingLinks(tx, rows);
      return listPostLinks(tx, post.id);
    });
  }
  return new Map(links.map((l) => [l.url, shortUrl(h, l.code)]));
}

function missing(links: TrackedLinkRow[], urls: string[]): string[] {
  const have = new Set(links.map((l) => l.url));
  return urls.filter((url) => !have.has(url));
}

/**
 * Where a short code leads, or null when no link has it. `count` (GET, not HEAD) adds the click to
 * the link's count of the day (UTC); nothing about the visitor is stored.
 */
export async function followShortLink(h: Herald, code: string, count: boolean): Promise<string | null> {
  if (!SHORT_CODE.test(code)) return null;
  const link = await findLinkByCode(h.db, code);
  if (!link) return null;
  if (count) {
    const day = DateTime.fromMillis(h.clock.now(), { zone: "utc" }).toISODate()!;
    await inLockedTransaction(h.db, (tx) => addClick(tx, link.id, day));
  }
  return link.target;
}

/** A post's short links with their clicks (`object: tracked_link`), in the order they were made. */
export async function presentPostLinks(h: Herald, postId: string) {
  const links = await listPostLinks(h.db, postId);
  const clicks = await clicksOfLinks(
    h.db,
    links.map((l) => l.id),
  );
  return links.map((l) => ({
    object: "tracked_link" as const,
    code: l.code,
    short_url: shortUrl(h, l.code),
    url: l.url,
    target: l.target,
    clicks: clicks.get(l.id) ?? 0,
    created_at: iso(l.createdAt),
  }));
}
