import { newId } from "../../db/ids.ts";
import type { Db } from "../../db/open.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Herald } from "../../herald.ts";
import { auditActorOf, type Actor } from "../../core/actor.ts";
import { ProblemError, type FieldError, type ProblemCode } from "../../core/problem.ts";
import { CHANNELS } from "../../providers/types.ts";
import { recordAudit } from "../audit/repo.ts";
import { findDestination, type DestinationRow } from "../destinations/repo.ts";
import type { WorkspaceRow } from "../workspaces/repo.ts";
import { findFreeQueueSlot, type QueueSlot } from "./queue.ts";
import { inPostsTransaction } from "./constraints.ts";
import { findAssets, findGroupDraft, type AssetRow, type PostRow } from "./repo.ts";
import {
  contentErrors,
  draftWarnings,
  exactTimeDetail,
  parseWhen,
  publicationErrors,
  textLengths,
  timeZoneErrors,
  type PostContent,
  type TextLength,
} from "./rules.ts";
import { enterPosts } from "./transition.ts";
import { asDraftAwaitingApproval, needsApproval, requestApprovals } from "../approvals/request.ts";
import { isMetered, reserveXUsage, usageMonth, xMonthlyLimit } from "./x-usage.ts";
import { linkTrackingOf } from "../links/settings.ts";

import { recycleFindings, recyclePlanOf, type RecycleInput } from "../recycling/plan.ts";
import type { RecyclePlan } from "../../db/recycle-plan.ts";

/** One item of `posts` in Create Post. */
export interface PostItemInput {
  destination_id?: string;
  channel?: string;
  body: string[];
  media?: string[];
  media_items?: { asset_id: string; item_index: number }[];
  destination_options?: Record<string, Record<string, unknown>>;
  /** false: this post's URLs are published as written even when the workspace tracks links. */
  link_tracking?: boolean;

  /** Copies after publication (evergreen posts). */
  recycle?: RecycleInput;
}

/** The Create Post body. */
export interface CreatePostsInput {
  when: string;
  confirmed?: boolean;
  time_zone?: string;
  group: string;
  posts: PostItemInput[];
}

/** An exact time may be this far in the past (clock skew) and still mean "now". */
const PAST_TOLERANCE_MS = 60_000;

// Problem categories in the order they are reported: a request is refused for the first that has errors.
const PRECEDENCE: ProblemCode[] = [
  "public_invalid_request",
  "public_live_credential_required",
  "public_post_group_channel_conflict",
  "public_unpublishable",
  "public_usage_limit_reached",
];

/** Errors found in a request, by the problem code they belong to. */
export class Findings {
  readonly byCode = new Map<ProblemCode, FieldError[]>();
  add(code: ProblemCode, errors: FieldError[]): void {
    if (errors.length === 0) return;
    this.byCode.set(code, [...(this.byCode.get(code) ?? []), ...errors]);
  }
  /** Throws the problem of the first category with errors. */
  throwFirst(details: Partial<Record<ProblemCode, string>>): void {
    for (const code of PRECEDENCE) {
      const errors = this.byCode.get(code);
      if (errors)
        throw new ProblemError(
          code,
          details[code] ??
            `${errors.length} problem(s): ${errors.map((e) => `${e.pointer} ${e.detail}`).join("; ")}`,
          { errors },
        );
    }
  }
}

/** The first line of the first body item, as the post's headline (≤ 100 characters). */
export function headlineOf(body: string[]): string {
  return (body[0] ?? "").split("\n")[0]!.trim().slice(0, 100);
}

/** Where a post's assets come from in the request, with pointers for errors. */
function assetItemsOf(item: PostItemInput, base: string): PostContent["assetItems"] {
  const fromMedia = (item.media ?? []).map((asset_id, i) => ({
    asset_id,
    item_index: 0,
    pointer: `${base}/media/${i}`,
  }));
  const fromItems = (item.media_items ?? []).map((m, i) => ({ ...m, pointer: `${base}/media_items/${i}` }));
  return [...fromMedia, ...fromItems];
}

/** A planned post, before it is stored. */
interface Planned {
  content: PostContent;
  destination: DestinationRow | null;
  assets: AssetRow[];
  /** A draft's: what publishing it would refuse. */
  warnings: FieldError[];
  /** The dry run's: each body item's text length by the network's counts. */
  lengths: TextLength[];

  recycle: RecyclePlan | null;
}

/** Everything Create Post decides before writing: the rows to store, or the findings that refuse it. */
export interface CreatePlan {
  findings: Findings;
  rows: PostRow[];
  immediate: boolean;
  /** For drafts: what publishing them would refuse (a draft is stored all the same). */
  warnings: FieldError[];
  /** The dry run's text lengths per body item and network count (see `textLengths`). */
  lengths: TextLength[];
}

async function resolveAssets(
  db: Db,
  workspaceId: string,
  items: PostContent["assetItems"],
): Promise<Map<string, AssetRow>> {
  return new Map(
    (await findAssets(db, workspaceId, [...new Set(items.map((a) => a.asset_id))])).map((a) => [a.id, a]),
  );
}

/**
 * Checks a Create Post request against every rule of the contract and plans its rows, reading
 * through `db` (Create Post passes its write transaction, so the queue slots and the group's drafts
 * it reads cannot change before it writes). Nothing is written; `findings` says what refuses it.
 */
export async function planCreatePosts(args: {
  h: Herald;
  db: Db;
  actor: Actor;
  workspace: WorkspaceRow;
  input: CreatePostsInput;
  now: number;
  /** Whether to work out drafts' warnings: only the dry run shows them, so Create Post skips the work. */
  withWarnings: boolean;
  /** The posts will be stored as drafts awaiting approval (one draft per channel per group applies). */
  forApproval?: boolean;
}): Promise<CreatePlan> {
  const { h, db, actor, workspace, input, now, withWarnings } = args;
  const findings = new Findings();
  const when = checkWhen(input, actor, findings);
  const draft = when?.mode === "draft";
  const planned: Planned[] = [];
  for (const [i, item] of input.posts.entries())
    planned.push(
      await planItem(
        {
          h,
          db,
          workspaceId: workspace.id,
          item,
          base: `/posts/${i}`,
          draft,
          withWarnings,
          linkTracking: linkTrackingOf(workspace.linkTracking).enabled && item.link_tracking !== false,
        },
        findings,
      ),
    );
  await checkGroupDrafts(
    db,
    workspace.id,
    input.group,
    planned,
    draft || args.forApproval === true,
    findings,
  );
  const schedule = await scheduleOf({ db, workspace, input, when, planned, now }, findings);
  const rows = planned.map((p) => plannedRow({ workspace, input, when, schedule, now }, p));
  const warnings = planned.flatMap((p) => p.warnings);
  const lengths = planned.flatMap((p) => p.lengths);
  return { findings, rows, immediate: when?.mode === "now", warnings, lengths };
}

type ParsedWhen = ReturnType<typeof parseWhen>;

/** `when`, `confirmed`, the key's environment and `time_zone`: the request's own rules. */
function checkWhen(input: CreatePostsInput, actor: Actor, findings: Findings): ParsedWhen {
  const when = parseWhen(input.when);
  if (!when)
    findings.add("public_invalid_request", [
      {
        pointer: "/when",
        code: "custom",
        detail: exactTimeDetail(
          input.when,
          'must be "now", "draft", "queue" or an ISO 8601 time with a UTC offset (e.g. 2026-05-01T09:00:00+02:00)',
        ),
      },
    ]);
  const draft = when?.mode === "draft";
  if (when && !draft) {
    if (input.confirmed !== true)
      findings.add("public_invalid_request", [
        { pointer: "/confirmed", code: "custom", detail: "must be true to publish or schedule" },
      ]);
    if (actor.environment !== "live")
      findings.add("public_live_credential_required", [
        { pointer: "", code: "custom", detail: "publishing and scheduling need a live API key" },
      ]);
  }
  if (when?.mode === "queue" && input.time_zone !== undefined)
    findings.add("public_invalid_request", [
      {
        pointer: "/time_zone",
        code: "custom",
        detail: "must be omitted with when: queue (the workspace time zone is used)",
      },
    ]);
  findings.add("public_invalid_request", timeZoneErrors(input.time_zone, "/time_zone"));
  return when;
}

/** One item of `posts`: its destination (or a draft's channel), its content and its assets, checked. */
async function planItem(
  args: {
    h: Herald;
    db: Db;
    workspaceId: string;
    item: PostItemInput;
    base: string;
    draft: boolean;
    withWarnings: boolean;
    /** The workspace tracks links and the item does not opt out. */
    linkTracking: boolean;
  },
  findings: Findings,
): Promise<Planned> {
  const { h, db, workspaceId, item, base, draft, withWarnings, linkTracking } = args;
  const destination = await itemDestination(db, workspaceId, item, base, draft, findings);
  const content: PostContent = {
    channel: destination?.channel ?? item.channel ?? "",
    body: item.body,
    assetItems: assetItemsOf(item, base),
    destinationOptions: item.destination_options ?? {},
    linkTracking,
  };
  findings.add("public_invalid_request", contentErrors(content, base));
  const assets = await resolveAssets(db, workspaceId, content.assetItems);
  let warnings: FieldError[] = [];
  if (draft) {
    const unknown = content.assetItems.filter((a) => !assets.has(a.asset_id));
    findings.add(
      "public_unpublishable",
      unknown.map((a) => ({
        pointer: a.pointer,
        code: "custom",
        detail: `no asset ${a.asset_id} in this workspace`,
      })),
    );
    if (withWarnings) {
      const refused = new Set(unknown.map((a) => a.pointer));
      warnings = draftWarnings(h, content, destination, assets, base).filter((w) => !refused.has(w.pointer));
    }
  } else if (destination) {
    findings.add("public_unpublishable", publicationErrors(h, content, destination, assets, base));
  }
  if (item.recycle) {
    const input = item.recycle;
    const recycled = recycleFindings({ h, input, content, destination, assets, base, draft, withWarnings });
    findings.add("public_invalid_request", recycled.invalid);
    findings.add("public_unpublishable", recycled.unpublishable);
    warnings = [...warnings, ...recycled.warnings];
  }
  const recycle = recyclePlanOf(item.recycle);
  const lengths = withWarnings ? textLengths(h, content, destination, assets, base) : [];
  return { content, destination, assets: [...assets.values()], warnings, lengths, recycle };
}

/** The item's destination: required to publish or schedule; a draft may name a channel instead. */
async function itemDestination(
  db: Db,
  workspaceId: string,
  item: PostItemInput,
  base: string,
  draft: boolean,
  findings: Findings,
): Promise<DestinationRow | null> {
  let destination: DestinationRow | null = null;
  if (item.destination_id !== undefined) {
    destination = (await findDestination(db, workspaceId, item.destination_id)) ?? null;
    if (!destination)
      findings.add("public_unpublishable", [
        {
          pointer: `${base}/destination_id`,
          code: "custom",
          detail: `no destination ${item.destination_id} in this workspace`,
        },
      ]);
  } else if (!draft) {
    findings.add("public_invalid_request", [
      {
        pointer: `${base}/destination_id`,
        code: "custom",
        detail: "is required to publish or schedule (drafts may give channel instead)",
      },
    ]);
  } else if (item.channel === undefined) {
    findings.add("public_invalid_request", [
      { pointer: `${base}/channel`, code: "custom", detail: "a draft needs destination_id or channel" },
    ]);
  }
  if (destination && item.channel !== undefined && item.channel !== destination.channel) {
    findings.add("public_invalid_request", [
      {
        pointer: `${base}/channel`,
        code: "custom",
        detail: `does not match the destination's channel ${destination.channel}`,
      },
    ]);
  }
  return destination;
}

/** The group constraint: one draft per channel per group, counting the drafts this request makes. */
async function checkGroupDrafts(
  db: Db,
  workspaceId: string,
  group: string,
  planned: Planned[],
  draft: boolean,
  findings: Findings,
): Promise<void> {
  const channels = new Map<string, number>();
  for (const [i, p] of planned.entries()) {
    if (!p.content.channel) continue;
    if (await findGroupDraft(db, workspaceId, group, p.content.channel)) {
      findings.add("public_post_group_channel_conflict", [
        {
          pointer: `/posts/${i}`,
          code: "custom",
          detail: `group ${group} already holds a ${p.content.channel} draft; update or publish it first`,
        },
      ]);
    } else if (draft && channels.has(p.content.channel)) {
      findings.add("public_post_group_channel_conflict", [
        {
          pointer: `/posts/${i}`,
          code: "custom",
          detail: `this request already makes a ${p.content.channel} draft for the group`,
        },
      ]);
    }
    channels.set(p.content.channel, i);
  }
}

/** When the posts go out: now, at an exact time (not in the past), or in the queue's next free slot. */
interface Schedule {
  timeZone: string;
  slot: QueueSlot | null;
  scheduledAt: number | null;
}

async function scheduleOf(
  args: {
    db: Db;
    workspace: WorkspaceRow;
    input: CreatePostsInput;
    when: ParsedWhen;
    planned: Planned[];
    now: number;
  },
  findings: Findings,
): Promise<Schedule> {
  const { db, workspace, input, when, planned, now } = args;
  const timeZone = input.time_zone ?? workspace.timeZone;
  let slot: QueueSlot | null = null;
  let scheduledAt: number | null = null;
  if (when?.mode === "now") scheduledAt = now;
  if (when?.mode === "exact") {
    if (when.at < now - PAST_TOLERANCE_MS)
      findings.add("public_unpublishable", [{ pointer: "/when", code: "custom", detail: "is in the past" }]);
    scheduledAt = Math.max(when.at, now);
  }
  if (when?.mode === "queue") {
    const destinationIds = planned.flatMap((p) => (p.destination ? [p.destination.id] : []));
    if (new Set(destinationIds).size !== destinationIds.length)
      findings.add("public_invalid_request", [
        { pointer: "/posts", code: "custom", detail: "a queued request may name each destination once" },
      ]);
    slot = await findFreeQueueSlot(db, { workspaceId: workspace.id, destinationIds, timeZone, now });
    if (!slot)
      findings.add("public_unpublishable", [
        {
          pointer: "/when",
          code: "custom",
          detail: "the workspace has no free queue window; set windows with PUT /workspaces/{id}/queue",
        },
      ]);
    scheduledAt = slot?.at ?? null;
  }
  return { timeZone, slot, scheduledAt };
}

/** The row a planned post is stored as. */
function plannedRow(
  args: {
    workspace: WorkspaceRow;
    input: CreatePostsInput;
    when: ParsedWhen;
    schedule: Schedule;
    now: number;
  },
  p: Planned,
): PostRow {
  const { workspace, input, when, now } = args;
  const { timeZone, slot, scheduledAt } = args.schedule;
  const draft = when?.mode === "draft";
  const assetsReady = p.assets.every((a) => a.status === "ready");
  const state = draft
    ? "draft"
    : !assetsReady
      ? "preparing"
      : scheduledAt !== null && scheduledAt <= now
        ? "ready"
        : "scheduled";
  return {
    id: newId("send"),
    workspaceId: workspace.id,
    groupKey: input.group,
    channel: p.content.channel,
    destinationId: p.destination?.id ?? null,
    state,
    version: 1,
    headline: headlineOf(p.content.body),
    body: p.content.body,
    destinationOptions: p.content.destinationOptions,
    assetItems: p.content.assetItems.map(({ asset_id, item_index }) => ({ asset_id, item_index })),
    scheduleMode: when?.mode ?? "draft",
    scheduledAt: draft ? null : scheduledAt,
    timeZone: when?.mode === "queue" ? workspace.timeZone : timeZone,
    queueLocalDate: slot?.localDate ?? null,
    queueWindowId: slot?.windowId ?? null,
    deferredReason: null,
    deferredUntil: null,
    retrySafety: "safe",
    lastError: null,
    linkTracking: p.content.linkTracking ?? false,
    providerPending: null,
    attemptCount: 0,
    nextTrigger: "initial",
    autoRetries: 0,
    nextActionAt: draft ? null : scheduledAt,
    leaseOwner: null,
    leaseExpiresAt: null,
    publishedAt: null,
    cancelledAt: null,
    missedAt: null,
    recycle: p.recycle,
    recycledFrom: null,
    recycleNumber: null,
    createdAt: now,
    updatedAt: now,
  };
}

/** Counts X posts per month among planned rows (for the usage reservation). */
export function xReservations(rows: PostRow[]): Map<string, number> {
  const months = new Map<string, number>();
  for (const row of rows) {
    if (!isMetered(row.channel) || row.state === "draft" || row.scheduledAt === null) continue;
    const month = usageMonth(row.scheduledAt);
    months.set(month, (months.get(month) ?? 0) + 1);
  }
  return months;
}

/**
 * Create Post: plans and stores all posts, their X usage reservation and the audit records in one
 * write transaction, so concurrent requests (or processes) never take one queue slot or make two
 * drafts of a channel in a group; the unique indexes back both, and answer 409, never 500.
 * Refusals are problems (400, 403, 409, 422, 402), in that order.
 */
export async function createPosts(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  input: CreatePostsInput;
}): Promise<{ rows: PostRow[]; immediate: boolean; awaitingApproval: boolean }> {
  const { h, actor, workspace, input } = args;
  const now = h.clock.now();
  // In a workspace that requires approval, what would publish or schedule is checked as such, then
  // stored as drafts awaiting a holder of posts:approve.
  const forApproval = input.when !== "draft" && needsApproval(workspace, actor);
  const plan = await inPostsTransaction(
    h.db,
    async (tx) => {
      const planned = await planCreatePosts({
        h,
        db: tx,
        actor,
        workspace,
        input,
        now,
        withWarnings: false,
        forApproval,
      });
      const testKey = "Publishing and scheduling need a live API key; this one is a test key.";
      planned.findings.throwFirst({ public_live_credential_required: testKey });
      planned.rows = await storePlannedPosts(tx, {
        h,
        actor,
        workspace,
        input,
        rows: planned.rows,
        forApproval,
        now,
      });
      return planned;
    },
    createHoldsByLocks(input),
  );
  return { rows: plan.rows, immediate: plan.immediate && !forApproval, awaitingApproval: forApproval };
}

/**
 * Stores the rows of a plan without findings, inside the caller's transaction: the posts with their X
 * usage reservation (402 over the month's limit), an audit record each, and, when they wait for
 * approval, as drafts with their approval requested. Returns the posts as stored. Create Post and the
 * CSV import both store through here.
 */
export async function storePlannedPosts(
  tx: Db,
  args: {
    h: Herald;
    actor: Actor;
    workspace: WorkspaceRow;
    input: CreatePostsInput;
    rows: PostRow[];
    forApproval: boolean;
    now: number;
  },
): Promise<PostRow[]> {
  const { h, actor, workspace, input, forApproval, now } = args;
  const rows = forApproval ? args.rows.map(asDraftAwaitingApproval) : args.rows;
  const xErrors = rows.flatMap((r, i) =>
    isMetered(r.channel)
      ? [{ pointer: `/posts/${i}`, code: "custom", detail: "X post over the monthly limit" }]
      : [],
  );
  await enterPosts({ tx, xLimit: xMonthlyLimit(h.config), rows, xErrors });
  for (const row of rows) {
    const action = row.state === "draft" ? "post.drafted" : "post.submitted";
    const target = { action, workspaceId: workspace.id, targetType: "post", targetId: row.id };
    await recordAudit(tx, auditActorOf(actor), target, now);
  }
  if (!forApproval) return rows;
  const requested = { when: input.when, ...(input.time_zone ? { time_zone: input.time_zone } : {}) };
  const posts = rows.map((post) => ({ post, destinationId: post.destinationId }));
  return await requestApprovals(tx, { posts, requested, actor, now });
}

/**
 * Whether Create Post keeps its invariants at READ COMMITTED (`inLockedTransaction`): the idempotency
 * key and the group's draft per channel are unique indexes, a month's X usage is a row upserted
 * before it is checked. Two need SERIALIZABLE: a queue slot (the free slot is read, then taken; a
 * collision is retried onto the next slot) and assets (deleting one checks that no live post uses it).
 */
export function createHoldsByLocks(input: CreatePostsInput): boolean {
  return input.when !== "queue" && input.posts.every((p) => !p.media?.length && !p.media_items?.length);
}

/**
 * The dry run: every finding of Create Post as `{pointer, code, detail, channel}`, nothing stored.
 * `valid` says whether this request would be accepted; for drafts, `warnings` (same shape, code
 * `public_unpublishable`) say what publishing them would refuse.
 */
export async function validatePosts(args: {
  h: Herald;
  actor: Actor;
  workspace: WorkspaceRow;
  input: CreatePostsInput;
}) {
  const { h, workspace } = args;
  const plan = await planCreatePosts({ ...args, db: h.db, now: h.clock.now(), withWarnings: true });
  const channelAt = (pointer: string) => {
    const index = /^\/posts\/(\d+)/.exec(pointer);
    return index ? plan.rows[Number(index[1])]?.channel || null : null;
  };
  const errors: ValidationFinding[] = [];
  for (const [code, list] of plan.findings.byCode) {
    for (const e of list)
      errors.push({ pointer: e.pointer, code, detail: e.detail, channel: channelAt(e.pointer) });
  }
  const warnings: ValidationFinding[] = plan.warnings.map((w) => ({
    pointer: w.pointer,
    code: "public_unpublishable",
    detail: w.detail,
    channel: channelAt(w.pointer),
  }));
  const reservations = xReservations(plan.rows);
  if (plan.findings.byCode.size === 0 && reservations.size > 0) {
    try {
      await inTransaction(h.db, async (tx) => {
        for (const [month, count] of reservations)
          await reserveXUsage(
            tx,
            { workspaceId: workspace.id, month, count, limit: xMonthlyLimit(h.config) },
            [],
          );
        throw new RollBack();
      });
    } catch (error) {
      if (error instanceof ProblemError)
        errors.push({
          pointer: "/posts",
          code: error.code,
          detail: error.detail,
          channel: plan.rows.find((r) => isMetered(r.channel))!.channel,
        });
      else if (!(error instanceof RollBack)) throw error;
    }
  }
  return {
    object: "post_validation" as const,
    valid: errors.length === 0,
    errors,
    warnings,
    lengths: plan.lengths,
  };
}

/** One entry of a post_validation's `errors` or `warnings`. */
interface ValidationFinding {
  pointer: string;
  code: string;
  detail: string;
  channel: string | null;
}

class RollBack extends Error {}

/** Whether a value is a channel of the contract. */
export function isChannel(value: string): boolean {
  return (CHANNELS as readonly string[]).includes(value);
}
