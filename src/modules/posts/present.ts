import { iso } from "../../lib/clock.ts";
import type { Db } from "../../db/open.ts";
import { findDestinationById, type DestinationRow } from "../destinations/repo.ts";
import {
  findAssets,
  listAttempts,
  listReceipts,
  type AssetRow,
  type AttemptRow,
  type PostRow,
  type ReceiptRow,
} from "./repo.ts";
import { presentApproval } from "../approvals/present.ts";
import { listCommentReceipts, type CommentReceiptRow } from "./repo-comments.ts";
import {
  listApprovals,
  listApprovalSteps,
  type ApprovalRow,
  type ApprovalStepRow,
} from "../approvals/repo.ts";
import { listRecycledCopies, type RecycledCopy } from "../recycling/repo.ts";
import { presentRecycle } from "../recycling/present.ts";
import { availableActions, isActionRequired, isTerminal, type PostState } from "./states.ts";

/** The post's ETag: its version (every change bumps it). */
export function postEtag(row: PostRow): string {
  return `"${row.id}.v${row.version}"`;
}

function presentAttempt(a: AttemptRow) {
  return {
    id: a.id,
    object: "publishing_attempt" as const,
    number: a.number,
    trigger: a.trigger,
    status: a.status,
    started_at: iso(a.startedAt),
    finished_at: iso(a.finishedAt),
    retry_safety: a.retrySafety,
    error: a.error,
    provider: a.provider,
  };
}

function presentReceipt(r: ReceiptRow) {
  return {
    id: r.id,
    object: "receipt" as const,
    kind: "post" as const,
    item_index: r.itemIndex,
    provider_object_id: r.providerObjectId,
    url: r.url,
    state: r.state,
    published_at: iso(r.publishedAt),
  };
}

/**
 * A first comment's receipt, after the items' (`kind: first_comment`, on item 0): `pending` until it
 * is out, then `published` with the comment's id and link, or `failed` with `error {code, message}`.
 */
function presentCommentReceipt(c: CommentReceiptRow) {
  return {
    id: c.id,
    object: "receipt" as const,
    kind: "first_comment" as const,
    item_index: 0,
    provider_object_id: c.providerObjectId,
    url: c.url,
    state: c.state,
    published_at: iso(c.publishedAt),
    error: c.error,
  };
}

/** Everything a post resource shows besides its own row. */
export interface PostRelations {
  destination: DestinationRow | null;
  receipts: ReceiptRow[];
  /** Its first comment's receipt, once the post is published with one. */
  comment?: CommentReceiptRow | null;
  assets: AssetRow[];
  attempts: AttemptRow[] | null;
  /** Its approval and the approval's steps (none: `approval` is null). */
  approval?: { row: ApprovalRow; steps: ApprovalStepRow[] } | null;
  /** An original's recycled copies (by number). */
  copies?: RecycledCopy[];
}

/** The post resource of the contract. */
export function presentPost(row: PostRow, rel: PostRelations) {
  const state = row.state as PostState;
  const assetsById = new Map(rel.assets.map((a) => [a.id, a]));
  const post: Record<string, unknown> = {
    id: row.id,
    object: "post",
    group: row.groupKey,
    channel: row.channel,
    state,
    editable: state === "draft",
    terminal: isTerminal(state),
    action_required: isActionRequired(state),
    next_action_at: iso(row.nextActionAt),
    retry_safety: row.retrySafety,
    available_actions: availableActions(
      state,
      row.scheduleMode,
      typeof row.lastError?.code === "string" ? row.lastError.code : null,
    ),
    version: row.version,
    payload: { headline: row.headline, body: row.body, destination_options: row.destinationOptions },
    asset_ids: [...new Set(row.assetItems.map((a) => a.asset_id))],
    link_tracking: row.linkTracking,
    destination_id: row.destinationId,
    scheduled_at: iso(row.scheduledAt),
    time_zone: row.timeZone,
    schedule_mode: row.scheduleMode,
    queue_local_date: row.queueLocalDate,
    queue_window_id: row.queueWindowId,
    attempt_count: row.attemptCount,
    deferred: row.deferredReason ? { reason: row.deferredReason, until: iso(row.deferredUntil) } : null,
    last_error: row.lastError,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
    published_at: iso(row.publishedAt),
    cancelled_at: iso(row.cancelledAt),
    missed_at: iso(row.missedAt),
    approval: presentApproval(rel.approval?.row, rel.approval?.steps ?? []),
    recycle: row.recycle ? presentRecycle(row.recycle, rel.copies ?? []) : null,
    recycled_from: row.recycledFrom,
    recycle_number: row.recycleNumber,
    receipts: [
      ...rel.receipts.map(presentReceipt),
      ...(rel.comment ? [presentCommentReceipt(rel.comment)] : []),
    ],
    destination: rel.destination
      ? {
          display_name: rel.destination.displayName,
          external_id: rel.destination.externalId,
          profile_image_url: rel.destination.profileImageUrl,
        }
      : null,
    assets: row.assetItems.flatMap((item) => {
      const asset = assetsById.get(item.asset_id);
      return asset
        ? [
            {
              id: asset.id,
              type: asset.type,
              label: asset.label,
              content_type: asset.contentType,
              item_index: item.item_index,
            },
          ]
        : [];
    }),
  };
  if (rel.attempts) post.attempts = rel.attempts.map(presentAttempt);
  return post;
}

/**
 * Loads the relations of many posts at once (a listing page) and presents them. `receipts`, when
 * given, are the posts' receipts already read (with the post, or none for posts just created).
 */
export async function presentPosts(
  db: Db,
  rows: PostRow[],
  options: { includeAttempts: boolean; receipts?: ReceiptRow[] },
) {
  const ids = rows.map((r) => r.id);
  const receipts = groupBy(options.receipts ?? (await listReceipts(db, ids)), (r) => r.postId);
  const attempts = options.includeAttempts ? groupBy(await listAttempts(db, ids), (a) => a.postId) : null;
  // Only published posts with a first comment have its receipt: no read for the others.
  const commented = rows.filter(
    (r) => r.state === "published" && typeof r.destinationOptions[r.channel]?.first_comment === "string",
  );
  const comments = new Map(
    (
      await listCommentReceipts(
        db,
        commented.map((r) => r.id),
      )
    ).map((c) => [c.postId, c]),
  );
  const approvals = new Map((await listApprovals(db, ids)).map((a) => [a.postId, a]));
  const steps = groupBy(
    approvals.size ? await listApprovalSteps(db, [...approvals.keys()]) : [],
    (s) => s.postId,
  );
  const copies = groupBy(
    await listRecycledCopies(
      db,
      rows.filter((r) => r.recycle !== null).map((r) => r.id),
    ),
    (c) => c.recycledFrom,
  );
  const destinations = new Map<string, DestinationRow | null>();
  const assetIdsByWorkspace = new Map<string, Set<string>>();
  for (const row of rows) {
    if (row.destinationId && !destinations.has(row.destinationId))
      destinations.set(row.destinationId, (await findDestinationById(db, row.destinationId)) ?? null);
    const set = assetIdsByWorkspace.get(row.workspaceId) ?? new Set();
    for (const item of row.assetItems) set.add(item.asset_id);
    assetIdsByWorkspace.set(row.workspaceId, set);
  }
  const assets = (
    await Promise.all([...assetIdsByWorkspace].map(([ws, set]) => findAssets(db, ws, [...set])))
  ).flat();
  return rows.map((row) =>
    presentPost(row, {
      destination: row.destinationId ? (destinations.get(row.destinationId) ?? null) : null,
      receipts: receipts.get(row.id) ?? [],
      comment: comments.get(row.id) ?? null,
      assets,
      attempts: attempts ? (attempts.get(row.id) ?? []) : null,
      approval: approvals.has(row.id)
        ? { row: approvals.get(row.id)!, steps: steps.get(row.id) ?? [] }
        : null,
      copies: copies.get(row.id) ?? [],
    }),
  );
}

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const list = map.get(key(item)) ?? [];
    list.push(item);
    map.set(key(item), list);
  }
  return map;
}

/** The post summary events carry as `data.object` (with `content` for full-content endpoints). */
export function eventPostSummary(row: PostRow, receipts: ReceiptRow[]) {
  return {
    id: row.id,
    object: "post",
    group: row.groupKey,
    channel: row.channel,
    destination_id: row.destinationId,
    state: row.state,
    scheduled_at: iso(row.scheduledAt),
    published_at: iso(row.publishedAt),
    url: receipts.find((r) => r.itemIndex === 0)?.url ?? null,
    error: row.lastError,
    content: { headline: row.headline, body: row.body },
  };
}
