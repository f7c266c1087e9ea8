import { recycleFindings } from "../recycling/plan.ts";
import { DateTime } from "luxon";
import { xMonthlyLimit } from "./x-usage.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, requireLive, type Actor } from "../../core/actor.ts";
import { needsApproval, requestApprovals, settleApprovals } from "../approvals/request.ts";
import type { AuditActor } from "../audit/repo.ts";
import { checkIfMatch } from "../../core/etag.ts";
import { invalid, notFound, ProblemError, type FieldError } from "../../core/problem.ts";
import { recordAudit } from "../audit/repo.ts";
import { findDestination } from "../destinations/repo.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";
import { Findings, headlineOf } from "./create.ts";
import { postEtag } from "./present.ts";
import { findFreeQueueSlot, type QueueSlot } from "./queue.ts";
import { inPostsTransaction } from "./constraints.ts";
import {
  deletePostRow,
  findAssets,
  findPost,
  findPostWithReceipts,
  updatePost,
  type PostRow,
  type ReceiptRow,
} from "./repo.ts";
import {
  contentErrors,
  exactTimeDetail,
  parseWhen,
  publicationErrors,
  timeZoneErrors,
  type PostContent,
} from "./rules.ts";
import { availableActions, type PostAction, type PostState } from "./states.ts";
import {
  editPostIfStill,
  transitionPost,
  transitionPosts,
  type PostChanges,
  type PostMoveRequest,
} from "./transition.ts";
import { requeueFailedComment } from "./repo-comments.ts";

/** The code of a post's last error, if any (a published post's says whether its comment failed). */
function lastErrorCode(post: PostRow): string | null {
  const code = (post.lastError as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : null;
}

async function audit(db: Db, actor: Actor, action: string, post: PostRow, now: number): Promise<void> {
  await recordAudit(
    db,
    auditActorOf(actor),
    { action, workspaceId: post.workspaceId, targetType: "post", targetId: post.id },
    now,
  );
}

/** The post of the workspace, or 404. */
export async function requirePost(db: Db, workspaceId: string, id: string): Promise<PostRow> {
  const row = await findPost(db, workspaceId, id);
  if (!row) throw notFound("post");
  return row;
}

/** A post of the workspace with its receipts (one statement), or 404: what GET one post presents. */
export async function requirePostWithReceipts(
  db: Db,
  workspaceId: string,
  id: string,
): Promise<{ post: PostRow; receipts: ReceiptRow[] }> {
  const found = await findPostWithReceipts(db, workspaceId, id);
  if (!found) throw notFound("post");
  return found;
}

/** 409 unless the post's state allows `action`. */
function requireAction(post: PostRow, action: PostAction): void {
  const available = availableActions(post.state as PostState, post.scheduleMode, lastErrorCode(post));
  if (!available.includes(action)) {
    throw new ProblemError(
      "public_conflict",
      `A ${post.state} post cannot be asked to ${action}; available: ${available.join(", ") || "none"}.`,
    );
  }
}

function requireConfirmed(confirmed: boolean | undefined): void {
  if (confirmed !== true) throw invalid("/confirmed", "must be true");
}

/** Re-reads a post after a write (versions moved on). */
async function reload(db: Db, post: PostRow): Promise<PostRow> {
  return (await findPost(db, post.workspaceId, post.id))!;
}

/** Edits a draft's body or attached assets; If-Match is required. */
export async function patchDraft(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
  input: { body?: string[]; asset_items?: { asset_id: string; item_index: number }[] };
  ifMatch: string | null;
}): Promise<PostRow> {
  const { h, actor, workspaceId, id, input, ifMatch } = args;
  return inTransaction(h.db, async (tx) => {
    const post = await requirePost(tx, workspaceId, id);
    checkIfMatch(ifMatch, postEtag(post), true);
    requireAction(post, "update");
    const body = input.body ?? post.body;
    const assetItems = input.asset_items ?? post.assetItems;
    const content: PostContent = {
      channel: post.channel,
      body,
      assetItems: assetItems.map((a, i) => ({ ...a, pointer: `/asset_items/${i}` })),
      destinationOptions: post.destinationOptions,
    };
    const errors = contentErrors(content, "");
    if (errors.length)
      throw new ProblemError("public_invalid_request", "The draft cannot take these changes.", { errors });
    const known = new Set(
      (
        await findAssets(
          tx,
          workspaceId,
          assetItems.map((a) => a.asset_id),
        )
      ).map((a) => a.id),
    );
    const unknown: FieldError[] = content.assetItems
      .filter((a) => !known.has(a.asset_id))
      .map((a) => ({
        pointer: a.pointer,
        code: "custom",
        detail: `no asset ${a.asset_id} in this workspace`,
      }));
    if (unknown.length)
      throw new ProblemError("public_unpublishable", "Unknown assets.", { errors: unknown });
    const now = h.clock.now();
    await updatePost(tx, id, { body, assetItems, headline: headlineOf(body), updatedAt: now });
    await audit(tx, actor, "post.updated", post, now);
    return reload(tx, post);
  });
}

/** Deletes a draft (If-Match required); a submitted post is refused with 409. */
export async function deleteDraft(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
  ifMatch: string | null;
}): Promise<PostRow> {
  const { h, actor, workspaceId, id, ifMatch } = args;
  return inTransaction(h.db, async (tx) => {
    const post = await requirePost(tx, workspaceId, id);
    checkIfMatch(ifMatch, postEtag(post), true);
    if (post.state !== "draft")
      throw new ProblemError(
        "public_conflict",
        `Only drafts can be deleted; this post is ${post.state}. Cancel it instead.`,
      );
    await deletePostRow(tx, id);
    await audit(tx, actor, "post.deleted", post, h.clock.now());
    return post;
  });
}

/** Cancels a post that has not gone out; its queue slot and X reservation are released. */
export async function cancelPost(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
  input: { confirmed?: boolean };
}): Promise<PostRow> {
  const { h, actor, workspaceId, id } = args;
  requireConfirmed(args.input.confirmed);
  return inTransaction(h.db, async (tx) => {
    const post = await requirePost(tx, workspaceId, id);
    requireAction(post, "cancel");
    const now = h.clock.now();
    // The door gives back the X reservation (a missed post gave it back when it was missed).
    const changes = { cancelledAt: now, nextActionAt: null, queueWindowId: null, queueLocalDate: null };
    await transitionPost({ tx, xLimit: xMonthlyLimit(h.config), now, post, to: "cancelled", changes });
    await audit(tx, actor, "post.cancelled", post, now);
    return reload(tx, post);
  });
}

/**
 * Sends a failed, missed or needs-attention post again now. When the last outcome is unknown
 * (`retry_safety: unsafe`) the caller must acknowledge that a duplicate may appear.
 */
export async function retryPost(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
  input: { confirmed?: boolean; acknowledge_duplicate_risk?: boolean };
}): Promise<PostRow> {
  const { h, actor, workspaceId, id, input } = args;
  requireConfirmed(input.confirmed);
  requireLive(actor, "Publishing needs a live API key.");
  return inPostsTransaction(h.db, async (tx) => {
    const post = await requirePost(tx, workspaceId, id);
    requireAction(post, "retry");
    await requireSendable(h, tx, post, input.acknowledge_duplicate_risk);
    const now = h.clock.now();
    // A published post whose first comment failed: the comment alone goes again, never the post.
    if (post.state === "published") {
      await requeueFailedComment(tx, post.id, now, input.acknowledge_duplicate_risk === true);
      const cleared = { lastError: null, retrySafety: "safe", updatedAt: now };
      await editPostIfStill(tx, post.id, { state: "published" }, cleared);
      await audit(tx, actor, "post.retried", post, now);
      return reload(tx, post);
    }
    // A failed or missed X post reserves again, in the month of its scheduled time (the door's rule).
    const changes = {
      nextActionAt: now,
      autoRetries: 0,
      missedAt: null,
      retrySafety: "safe",
      nextTrigger: "manual_retry",
    };
    await transitionPost({ tx, xLimit: xMonthlyLimit(h.config), now, post, to: "ready", changes });
    await audit(tx, actor, "post.retried", post, now);
    return reload(tx, post);
  });
}

/**
 * What sending a post again needs: the duplicate risk acknowledged when the last outcome is unknown,
 * a connected destination, and content the network will take.
 */
async function requireSendable(
  h: Herald,
  tx: Db,
  post: PostRow,
  acknowledged: boolean | undefined,
): Promise<void> {
  if (post.retrySafety === "unsafe" && acknowledged !== true) {
    throw new ProblemError(
      "public_conflict",
      "The last attempt's outcome is unknown: the post may already be on the network. Check it there; to send it anyway, repeat with acknowledge_duplicate_risk: true.",
      {
        errors: [
          {
            pointer: "/acknowledge_duplicate_risk",
            code: "custom",
            detail: "must be true to send again a post whose last outcome is unknown",
          },
        ],
      },
    );
  }
  const destination = post.destinationId
    ? await findDestination(tx, post.workspaceId, post.destinationId)
    : undefined;
  if (!destination)
    throw new ProblemError("public_unpublishable", "The post's destination was disconnected.", {
      errors: [{ pointer: "", code: "custom", detail: "destination disconnected" }],
    });
  const errors = publicationErrors(
    h,
    contentOf(post),
    destination,
    new Map(
      (
        await findAssets(
          tx,
          post.workspaceId,
          post.assetItems.map((a) => a.asset_id),
        )
      ).map((a) => [a.id, a]),
    ),
    "",
  );
  if (errors.length)
    throw new ProblemError("public_unpublishable", "The post cannot be published as it is.", { errors });
}

function contentOf(post: PostRow): PostContent {
  return {
    channel: post.channel,
    body: post.body,
    assetItems: post.assetItems.map((a, i) => ({ ...a, pointer: `/asset_ids/${i}` })),
    destinationOptions: post.destinationOptions,
    linkTracking: post.linkTracking,
  };
}

/** Moves a post to an exact new time (leaving its queue slot). */
export async function reschedulePost(args: {
  h: Herald;
  actor: Actor;
  workspaceId: string;
  id: string;
  input: {
    confirmed?: boolean;
    scheduled_at: string;
    time_zone?: string;
    acknowledge_duplicate_risk?: boolean;
  };
}): Promise<PostRow> {
  const { h, actor, workspaceId, id, input } = args;
  requireConfirmed(input.confirmed);
  requireLive(actor, "Scheduling needs a live API key.");
  const when = parseWhen(input.scheduled_at);
  if (!when || when.mode !== "exact")
    throw invalid(
      "/scheduled_at",
      exactTimeDetail(input.scheduled_at, "must be an ISO 8601 time with a UTC offset"),
    );
  const zoneErrors = timeZoneErrors(input.time_zone, "/time_zone");
  if (zoneErrors.length)
    throw new ProblemError("public_invalid_request", zoneErrors[0]!.detail, { errors: zoneErrors });
  const now = h.clock.now();
  if (when.at < now - 60_000)
    throw new ProblemError("public_unpublishable", "The new time is in the past.", {
      errors: [{ pointer: "/scheduled_at", code: "custom", detail: "is in the past" }],
    });
  return inPostsTransaction(h.db, async (tx) => {
    const post = await requirePost(tx, workspaceId, id);
    requireAction(post, "reschedule");
    // Rescheduling a post that failed or needs attention sends it again: the same checks as retry.
    if (post.state !== "scheduled" && post.state !== "ready")
      await requireSendable(h, tx, post, input.acknowledge_duplicate_risk);
    const at = Math.max(when.at, now);
    const changes: PostChanges = {
      scheduledAt: at,
      nextActionAt: at,
      scheduleMode: "exact",
      timeZone: input.time_zone ?? post.timeZone,
      queueWindowId: null,
      queueLocalDate: null,
      missedAt: null,
      autoRetries: 0,
      ...(post.state === "scheduled" || post.state === "ready"
        ? {}
        : { retrySafety: "safe", nextTrigger: "manual_retry" }),
    };
    // An X post gives back its reservation and takes one for the new time: the limit is checked again.
    const xErrors = [{ pointer: "/scheduled_at", code: "custom", detail: "X post over the monthly limit" }];
    const to = at <= now ? "ready" : "scheduled";
    await transitionPost({
      tx,
      xLimit: xMonthlyLimit(h.config),
      now,
      post,
      to,
      changes,
      reReserve: true,
      xErrors,
    });
    await audit(tx, actor, "post.rescheduled", post, now);
    return reload(tx, post);
  });
}

/**
 * Publish drafts: each `{id, version, destination_id}` is checked, then all are submitted together.
 * In a workspace that requires approval, a caller without posts:approve sends them for approval
 * instead: they stay drafts with `approval.status: requested` (`awaitingApproval`, answered 202).
 */
export async function publishDrafts(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  input: PublishDraftsInput;
}): Promise<{ rows: PostRow[]; immediate: boolean; awaitingApproval: boolean }> {
  const { h, actor, workspace, input } = args;
  const now = h.clock.now();
  const when = checkPublishRequest(input, actor.environment, now);
  return inPostsTransaction(h.db, async (tx) => {
    if (needsApproval(workspace, actor)) {
      const { drafts } = await checkDrafts({ h, tx, workspace, input, when, now });
      const requested = { when: input.when, ...(input.time_zone ? { time_zone: input.time_zone } : {}) };
      const rows = await requestApprovals(tx, {
        posts: drafts.map((d) => ({ post: d.post, destinationId: d.destination.id })),
        requested,
        actor,
        now,
      });
      return { rows, immediate: false, awaitingApproval: true };
    }
    const rows = await submitDrafts({ h, tx, auditActor: auditActorOf(actor), workspace, input, when, now });
    // An approver publishing drafts that awaited approval decides it with the same act.
    await settleApprovals(tx, { posts: rows, actor, now });
    return { rows, immediate: when.mode === "now", awaitingApproval: false };
  });
}

/**
 * The submission of publish drafts inside the caller's transaction (approving a post runs it too, as
 * if the post were published then): checks every draft, then moves all out of `draft` together.
 */
export async function submitDrafts(args: {
  h: Herald;
  tx: Db;
  auditActor: AuditActor;
  workspace: WorkspaceRow;
  input: PublishDraftsInput;
  when: PublishWhen;
  now: number;
}): Promise<PostRow[]> {
  const { h, tx, auditActor, workspace, input, when, now } = args;
  const { drafts, schedule } = await checkDrafts({ h, tx, workspace, input, when, now });
  const moves: PostMoveRequest[] = [];
  for (const draft of drafts) moves.push(await draftMove({ tx, workspace, when, schedule, now }, draft));
  // X posts reserve their month together (the door's rule for drafts leaving `draft`).
  const rows = (await transitionPosts({ tx, xLimit: xMonthlyLimit(h.config), now, moves })).map(
    (row) => row!,
  );
  for (const row of rows)
    await recordAudit(
      tx,
      auditActor,
      { action: "post.submitted", workspaceId: row.workspaceId, targetType: "post", targetId: row.id },
      now,
    );
  return rows;
}

/**
 * Every draft a publish request names, checked (404, 409, one group, publishable on its destination),
 * and when they would go out (a free queue window now, also for a request sent for approval).
 */
async function checkDrafts(args: {
  h: Herald;
  tx: Db;
  workspace: WorkspaceRow;
  input: PublishDraftsInput;
  when: PublishWhen;
  now: number;
}): Promise<{ drafts: Draft[]; schedule: Awaited<ReturnType<typeof draftsSchedule>> }> {
  const { h, tx, workspace, input } = args;
  const findings = new Findings();
  let groupKey: string | undefined;
  const drafts: Draft[] = [];
  for (const [i, item] of input.posts.entries()) {
    const post = await requireDraft(tx, workspace.id, item, i);
    const destination = await draftDestination({ h, tx, workspaceId: workspace.id, post, item, i }, findings);
    groupKey ??= post.groupKey;
    requireOneGroup(groupKey, post, i);
    drafts.push({ post, destination: destination! });
  }
  findings.throwFirst({});
  return { drafts, schedule: await draftsSchedule({ ...args, drafts }) };
}

/** The body of publish drafts. */
export interface PublishDraftsInput {
  confirmed?: boolean;
  when: string;
  time_zone?: string;
  posts: { id: string; version: number; destination_id: string }[];
}

/** When drafts go out, parsed. */
export type PublishWhen = { mode: "now" | "queue" } | { mode: "exact"; at: number };
type DestinationRow = NonNullable<Awaited<ReturnType<typeof findDestination>>>;
interface Draft {
  post: PostRow;
  destination: DestinationRow;
}

/** The request's own rules, before anything is read: throws the first problem found. */
export function checkPublishRequest(
  input: PublishDraftsInput,
  environment: Actor["environment"],
  now: number,
): PublishWhen {
  const findings = new Findings();
  const when = parseWhen(input.when);
  if (!when || when.mode === "draft")
    findings.add("public_invalid_request", [
      {
        pointer: "/when",
        code: "custom",
        detail: exactTimeDetail(input.when, 'must be "now", "queue" or an ISO 8601 time with a UTC offset'),
      },
    ]);
  if (input.confirmed !== true)
    findings.add("public_invalid_request", [
      { pointer: "/confirmed", code: "custom", detail: "must be true to publish or schedule" },
    ]);
  if (environment !== "live")
    findings.add("public_live_credential_required", [
      { pointer: "", code: "custom", detail: "publishing needs a live API key" },
    ]);
  if (when?.mode === "queue" && input.time_zone !== undefined)
    findings.add("public_invalid_request", [
      { pointer: "/time_zone", code: "custom", detail: "must be omitted with when: queue" },
    ]);
  findings.add("public_invalid_request", timeZoneErrors(input.time_zone, "/time_zone"));
  if (new Set(input.posts.map((p) => p.id)).size !== input.posts.length)
    findings.add("public_invalid_request", [
      { pointer: "/posts", code: "custom", detail: "names a post twice" },
    ]);
  if (
    when?.mode === "queue" &&
    new Set(input.posts.map((p) => p.destination_id)).size !== input.posts.length
  ) {
    findings.add("public_invalid_request", [
      {
        pointer: "/posts",
        code: "custom",
        detail: "a queued request may name each destination once (a window holds one post per destination)",
      },
    ]);
  }
  if (when?.mode === "exact" && when.at < now - 60_000)
    findings.add("public_unpublishable", [{ pointer: "/when", code: "custom", detail: "is in the past" }]);
  findings.throwFirst({});
  return when as PublishWhen;
}

/** The draft an item names, at the version the caller saw: 404, 409 otherwise. */
async function requireDraft(
  tx: Db,
  workspaceId: string,
  item: { id: string; version: number },
  i: number,
): Promise<PostRow> {
  const post = await findPost(tx, workspaceId, item.id);
  if (!post)
    throw new ProblemError("public_not_found", `No post ${item.id}.`, {
      errors: [{ pointer: `/posts/${i}/id`, code: "custom", detail: "no such post" }],
    });
  if (post.state !== "draft")
    throw new ProblemError("public_conflict", `Post ${item.id} is ${post.state}, not a draft.`, {
      errors: [{ pointer: `/posts/${i}/id`, code: "custom", detail: "is not a draft" }],
    });
  if (post.version !== item.version)
    throw new ProblemError(
      "public_version_conflict",
      `Post ${item.id} is at version ${post.version}, not ${item.version}; fetch it again.`,
      {
        errors: [
          {
            pointer: `/posts/${i}/version`,
            code: "custom",
            detail: `current version is ${post.version}`,
          },
        ],
      },
    );
  return post;
}

/** The destination a draft goes to: of the draft's channel, and able to publish what the draft holds. */
async function draftDestination(
  args: {
    h: Herald;
    tx: Db;
    workspaceId: string;
    post: PostRow;
    item: { destination_id: string };
    i: number;
  },
  findings: Findings,
): Promise<DestinationRow | undefined> {
  const { h, tx, workspaceId, post, item, i } = args;
  const destination = await findDestination(tx, workspaceId, item.destination_id);
  const base = `/posts/${i}`;
  if (!destination)
    findings.add("public_unpublishable", [
      {
        pointer: `${base}/destination_id`,
        code: "custom",
        detail: `no destination ${item.destination_id} in this workspace`,
      },
    ]);
  else if (destination.channel !== post.channel)
    findings.add("public_unpublishable", [
      {
        pointer: `${base}/destination_id`,
        code: "custom",
        detail: `is a ${destination.channel} destination; the draft is for ${post.channel}`,
      },
    ]);
  else {
    const assets = await findAssets(
      tx,
      workspaceId,
      post.assetItems.map((a) => a.asset_id),
    );
    const content = {
      ...contentOf(post),
      assetItems: post.assetItems.map((a, k) => ({ ...a, pointer: `${base}/asset_ids/${k}` })),
    };
    const byId = new Map(assets.map((a) => [a.id, a]));
    findings.add("public_unpublishable", publicationErrors(h, content, destination, byId, base));
    // A draft's variations warned only; publishing checks them as the body is checked.
    if (post.recycle) {
      const input = post.recycle;
      const args = { h, input, content, destination, assets: byId, base, draft: false, withWarnings: false };
      const recycled = recycleFindings(args);
      findings.add("public_unpublishable", [...recycled.invalid, ...recycled.unpublishable]);
    }
  }
  return destination;
}

/** The posts of one request belong to one group (the answer is one post set). */
function requireOneGroup(groupKey: string, post: PostRow, i: number): void {
  if (post.groupKey === groupKey) return;
  throw new ProblemError(
    "public_invalid_request",
    "The posts of one request must belong to one group (the answer is one post set).",
    {
      errors: [{ pointer: `/posts/${i}/id`, code: "custom", detail: `belongs to group ${post.groupKey}` }],
    },
  );
}

/** When drafts go out: now, at the exact time, or in the queue's next slot free on every destination. */
async function draftsSchedule(args: {
  tx: Db;
  workspace: WorkspaceRow;
  input: PublishDraftsInput;
  when: PublishWhen;
  drafts: Draft[];
  now: number;
}): Promise<{ timeZone: string; slot: QueueSlot | null; scheduledAt: number }> {
  const { tx, workspace, input, when, drafts, now } = args;
  const timeZone = input.time_zone ?? workspace.timeZone;
  if (when.mode !== "queue")
    return { timeZone, slot: null, scheduledAt: when.mode === "exact" ? Math.max(when.at, now) : now };
  const slot = await findFreeQueueSlot(tx, {
    workspaceId: workspace.id,
    destinationIds: drafts.map((d) => d.destination.id),
    timeZone: workspace.timeZone,
    now,
  });
  if (!slot)
    throw new ProblemError("public_unpublishable", "No free queue window.", {
      errors: [{ pointer: "/when", code: "custom", detail: "the workspace has no free queue window" }],
    });
  return { timeZone, slot, scheduledAt: slot.at };
}

/** A draft's move out of `draft`: preparing until its assets are ready, then ready or scheduled. */
async function draftMove(
  args: {
    tx: Db;
    workspace: WorkspaceRow;
    when: PublishWhen;
    schedule: Awaited<ReturnType<typeof draftsSchedule>>;
    now: number;
  },
  { post, destination }: Draft,
): Promise<PostMoveRequest> {
  const { tx, workspace, when, now } = args;
  const { timeZone, slot, scheduledAt } = args.schedule;
  const assets = await findAssets(
    tx,
    workspace.id,
    post.assetItems.map((a) => a.asset_id),
  );
  const assetsReady = assets.every((a) => a.status === "ready");
  const to: PostState = !assetsReady ? "preparing" : scheduledAt <= now ? "ready" : "scheduled";
  const changes: PostChanges = {
    destinationId: destination.id,
    scheduleMode: when.mode,
    scheduledAt,
    nextActionAt: scheduledAt,
    timeZone: when.mode === "queue" ? workspace.timeZone : timeZone,
    queueWindowId: slot?.windowId ?? null,
    queueLocalDate: slot?.localDate ?? null,
  };
  return { post, to, changes };
}

/** The optimistic check of a move: the post is still at the time the caller saw (409 otherwise). */
function requireScheduledAt(post: PostRow, expectedScheduledAt: string, i: number): void {
  const expected = parseWhen(expectedScheduledAt);
  if (!expected || expected.mode !== "exact")
    throw invalid(`/posts/${i}/expected_scheduled_at`, "must be an ISO 8601 time with a UTC offset");
  if (expected.at === post.scheduledAt) return;
  throw new ProblemError(
    "public_version_conflict",
    `Post ${post.id} is no longer scheduled at ${expectedScheduledAt}; fetch it again.`,
    {
      errors: [
        {
          pointer: `/posts/${i}/expected_scheduled_at`,
          code: "custom",
          detail: `the post is scheduled at ${new Date(post.scheduledAt!).toISOString()}`,
        },
      ],
    },
  );
}

/**
 * Moves queued posts to the earliest free window on `local_date` (workspace time zone). Each post's
 * `expected_scheduled_at` must still be its time (an optimistic check), else 409.
 */
export async function movePostsInQueue(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  input: { confirmed?: boolean; local_date: string; posts: { id: string; expected_scheduled_at: string }[] };
}): Promise<PostRow[]> {
  const { h, actor, workspace, input } = args;
  requireConfirmed(input.confirmed);
  // Moving reschedules live posts: the same refusal as reschedule for a test key.
  requireLive(actor, "Scheduling needs a live API key.");
  // Strict: a calendar date that exists (Date.parse would take 2026-02-30 as March 2nd).
  if (
    !/^\d{4}-\d{2}-\d{2}$/.test(input.local_date) ||
    !DateTime.fromISO(input.local_date, { zone: "UTC" }).isValid
  )
    throw invalid("/local_date", "must be a date YYYY-MM-DD");
  const now = h.clock.now();
  return inPostsTransaction(h.db, async (tx) => {
    let groupKey: string | undefined;
    const moved: PostRow[] = [];
    for (const [i, item] of input.posts.entries()) {
      const post = await findPost(tx, workspace.id, item.id);
      if (!post)
        throw new ProblemError("public_not_found", `No post ${item.id}.`, {
          errors: [{ pointer: `/posts/${i}/id`, code: "custom", detail: "no such post" }],
        });
      requireAction(post, "move");
      groupKey ??= post.groupKey;
      requireOneGroup(groupKey, post, i);
      requireScheduledAt(post, item.expected_scheduled_at, i);
      // The post's own slot is free to it: moving to its own date may keep (or improve) its window.
      const slot = await findFreeQueueSlot(tx, {
        workspaceId: workspace.id,
        destinationIds: [post.destinationId!],
        timeZone: workspace.timeZone,
        now,
        localDate: input.local_date,
        exceptPostId: post.id,
      });
      if (!slot)
        throw new ProblemError(
          "public_unpublishable",
          `No free window on ${input.local_date} for post ${post.id}.`,
          {
            errors: [
              {
                pointer: `/posts/${i}`,
                code: "custom",
                detail: `no free future window on ${input.local_date}`,
              },
            ],
          },
        );
      // Moving within the state `scheduled`: an X reservation follows the post when the month changes.
      const changes = {
        scheduledAt: slot.at,
        nextActionAt: slot.at,
        queueWindowId: slot.windowId,
        queueLocalDate: slot.localDate,
      };
      const xErrors = [{ pointer: `/posts/${i}`, code: "custom", detail: "X post over the monthly limit" }];
      moved.push(
        (await transitionPost({
          tx,
          xLimit: xMonthlyLimit(h.config),
          now,
          post,
          to: "scheduled",
          changes,
          xErrors,
        }))!,
      );
      await audit(tx, actor, "post.moved", post, now);
    }
    return moved;
  });
}
