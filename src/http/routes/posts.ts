import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import type { Actor } from "../../core/actor.ts";
import { listingSchema, operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import {
  cancelPost,
  deleteDraft,
  movePostsInQueue,
  patchDraft,
  publishDrafts,
  requirePostWithReceipts,
  reschedulePost,
  retryPost,
} from "../../modules/posts/actions.ts";
import { createHoldsByLocks, createPosts, validatePosts } from "../../modules/posts/create.ts";
import { postListingFilter } from "../../modules/posts/listing.ts";
import { postEtag, presentPosts } from "../../modules/posts/present.ts";
import { putQueueWindows } from "../../modules/posts/queue.ts";
import { listQueueWindows } from "../../modules/posts/repo-queue.ts";
import { listPosts, type PostRow, type ReceiptRow } from "../../modules/posts/repo.ts";
import { isTerminal, isActionRequired, type PostState } from "../../modules/posts/states.ts";
import { handler, workspaceOf, type RouteContext } from "./context.ts";
import {
  CancelPostBody,
  CreatePostsBody,
  DeletedPost,
  GetPostQuery,
  ListPostsQuery,
  MovePostsBody,
  PatchDraftBody,
  Post,
  PostParams,
  PostSet,
  PostValidation,
  PublishDraftsBody,
  PutQueueBody,
  Queue,
  ReschedulePostBody,
  RetryPostBody,
} from "./posts-schemas.ts";
import { WorkspaceParams } from "./common-schemas.ts";

type PostContext<Body = unknown, Query = unknown> = RouteContext<Body, Query, Static<typeof PostParams>>;

/** A post response with its ETag. */
async function postResponse(
  h: Herald,
  row: PostRow,
  includeAttempts = false,
  status = 200,
  receipts?: ReceiptRow[],
): Promise<Response> {
  const [post] = await presentPosts(h.db, [row], { includeAttempts, receipts });
  return resourceResponse(post, status, { etag: postEtag(row) });
}

/**
 * A post set response: 202 with Retry-After while provider work is still active for an immediate
 * publication (the caller polls the posts), 202 without it when the posts await approval, 201
 * otherwise. `created`: the posts were made in this request's open transaction, so they have no
 * receipts yet and none are read.
 */
async function postSetResponse(
  h: Herald,
  group: string,
  result: { rows: PostRow[]; immediate: boolean; awaitingApproval: boolean },
  created = false,
): Promise<Response> {
  const { rows, immediate, awaitingApproval } = result;
  const active =
    immediate &&
    rows.some((r) => !isTerminal(r.state as PostState) && !isActionRequired(r.state as PostState));
  const body = {
    object: "post_set",
    group,
    posts: await presentPosts(h.db, rows, { includeAttempts: false, receipts: created ? [] : undefined }),
  };
  return new Response(JSON.stringify(body), {
    status: active || awaitingApproval ? 202 : 201,
    headers: { "content-type": "application/json", ...(active ? { "retry-after": "1" } : {}) },
  });
}

/** POST /posts: runs idempotently; the key is required unless the posts are drafts. */
function createPostSet(h: Herald, c: RouteContext<Static<typeof CreatePostsBody>>) {
  const { actor, request, body } = c;
  return runIdempotent(
    h,
    {
      accountId: actor.accountId,
      request,
      body,
      required: body.when !== "draft",
      atomic: true,
      locked: createHoldsByLocks(body),
    },
    async () => {
      const result = await createPosts({ h, actor, workspace: workspaceOf(c), input: body });
      return postSetResponse(h, body.group, result, true);
    },
  );
}

/** GET /posts: one page of the filtered listing; the cursor is bound to the filter and the caller. */
async function listPostPage(h: Herald, c: RouteContext<unknown, Static<typeof ListPostsQuery>>) {
  const { actor, request, query } = c;
  const workspace = workspaceOf(c);
  const filter = postListingFilter(query);
  // The cursor is bound to the filter: everything of the query but the paging and presentation.
  const filterKey = JSON.stringify({ ...query, limit: undefined, after: undefined, include: undefined });
  const scope = `posts:${workspace.id}:${actor.credentialId}:${filterKey}`;
  const page = parsePageQuery(h, query, scope);
  const rows = await listPosts(h.db, workspace.id, filter, page.afterId, page.limit);
  const presented = new Map(
    (await presentPosts(h.db, rows, { includeAttempts: query.include === "attempts" })).map((p) => [
      p.id as string,
      p,
    ]),
  );
  return pageResponse(h, request, rows, page, scope, (row) => presented.get(row.id));
}

/** POST /posts/validate: the Create Post checks, nothing stored. */
async function validatePostSet(h: Herald, c: RouteContext<Static<typeof CreatePostsBody>>) {
  return await validatePosts({ h, actor: c.actor, workspace: workspaceOf(c), input: c.body });
}

/** POST /posts/publish: the key is required (drafts go out). */
function publishDraftSet(h: Herald, c: RouteContext<Static<typeof PublishDraftsBody>>) {
  const { actor, request, body } = c;
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body, required: true, atomic: true },
    async () => {
      const result = await publishDrafts({ h, actor, workspace: workspaceOf(c), input: body });
      return postSetResponse(h, result.rows[0]?.groupKey ?? "", result);
    },
  );
}

/** POST /posts/move: answers the moved posts as a post set (200). */
function movePostSet(h: Herald, c: RouteContext<Static<typeof MovePostsBody>>) {
  const { actor, request, body } = c;
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body, required: false, atomic: true },
    async () => {
      const rows = await movePostsInQueue({ h, actor, workspace: workspaceOf(c), input: body });
      return new Response(
        JSON.stringify({
          object: "post_set",
          group: rows[0]?.groupKey ?? "",
          posts: await presentPosts(h.db, rows, { includeAttempts: false }),
        }),
        { headers: { "content-type": "application/json" } },
      );
    },
  );
}

/** GET one post, with its attempts when asked. */
async function getPost(h: Herald, c: PostContext<unknown, Static<typeof GetPostQuery>>) {
  const { params, query } = c;
  const { post, receipts } = await requirePostWithReceipts(h.db, params.workspace_id, params.post_id);
  return postResponse(h, post, query.include === "attempts", 200, receipts);
}

/** PATCH one draft under If-Match. */
async function patchPost(h: Herald, c: PostContext<Static<typeof PatchDraftBody>>) {
  const { actor, params, body, request } = c;
  const row = await patchDraft({
    h,
    actor,
    workspaceId: params.workspace_id,
    id: params.post_id,
    input: body,
    ifMatch: request.headers.get("if-match"),
  });
  return postResponse(h, row);
}

/** DELETE one draft under If-Match; the key is required. */
function deletePost(h: Herald, c: PostContext) {
  const { actor, params, request } = c;
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body: null, required: true, atomic: true },
    async () => {
      const post = await deleteDraft({
        h,
        actor,
        workspaceId: params.workspace_id,
        id: params.post_id,
        ifMatch: request.headers.get("if-match"),
      });
      return new Response(JSON.stringify({ id: post.id, object: "post", deleted: true }), {
        headers: { "content-type": "application/json" },
      });
    },
  );
}

/** A verb on one post (cancel, retry, reschedule): run idempotently, answer the post. */
function onePostVerb<Input>(
  verb: (args: {
    h: Herald;
    actor: Actor;
    workspaceId: string;
    id: string;
    input: Input;
  }) => Promise<PostRow>,
) {
  return (h: Herald, c: PostContext<Input>) => {
    const { actor, params, body, request } = c;
    return runIdempotent(
      h,
      { accountId: actor.accountId, request, body, required: false, atomic: true },
      async () =>
        postResponse(
          h,
          await verb({ h, actor, workspaceId: params.workspace_id, id: params.post_id, input: body }),
        ),
    );
  };
}

const cancelOnePost = onePostVerb(cancelPost);
const retryOnePost = onePostVerb(retryPost);
const rescheduleOnePost = onePostVerb(reschedulePost);

/** GET /queue. */
async function getQueue(h: Herald, c: RouteContext) {
  const workspace = workspaceOf(c);
  return resourceResponse(presentQueue(workspace.timeZone, await listQueueWindows(h.db, workspace.id)));
}

/** PUT /queue: replaces every window. */
async function putQueue(h: Herald, c: RouteContext<Static<typeof PutQueueBody>>) {
  const workspace = workspaceOf(c);
  const windows = await putQueueWindows({
    h,
    actor: c.actor,
    workspaceId: workspace.id,
    windows: c.body.windows,
  });
  return resourceResponse(presentQueue(workspace.timeZone, windows));
}

function presentQueue(timeZone: string, windows: Awaited<ReturnType<typeof listQueueWindows>>) {
  return {
    object: "queue" as const,
    time_zone: timeZone,
    windows: windows.map((w) => ({ id: w.id, weekday: w.weekday, local_time: w.localTime })),
  };
}

const tag = "Posts";
const doc = {
  create: operation({
    scope: "posts:write",
    operationId: "createPost",
    summary: "Create posts: drafts, published now, at a time, or in the queue",
    tag,
    errors: [402, 404, 409, 422],
    idempotency: "optional",
    description:
      "Idempotency-Key is required to publish or schedule, optional for drafts. 202 with " +
      "Retry-After while provider work is active. In a workspace with `approval_required`, a " +
      "credential without `posts:approve` that would publish or schedule gets 202 and drafts " +
      "with `approval.status: requested` (the `when` is applied when a holder approves). An item's " +
      "`recycle` publishes `count` copies later, each `every_days` after the publication before " +
      "(not on x, tiktok, youtube: 422 at `/posts/<i>/recycle`).",
  }),
  list: operation({
    scope: "posts:read",
    operationId: "listPosts",
    summary: "List posts (views, filters, include=attempts)",
    description:
      "The workspace's posts, narrowed by `view` (drafts, scheduled, published, attention), " +
      "channel, group, destination, state, creation or schedule time and `approval` status " +
      "(`approval=requested`: awaiting approval); `include=attempts` " +
      "adds each post's publishing attempts. Paged with `limit` and `after`.",
    tag,
    errors: [404],
  }),
  validate: operation({
    scope: "posts:read",
    operationId: "validatePost",
    summary: "Check a Create Post request without storing anything",
    description:
      "`valid` and `errors` say whether this request would be accepted. With `when: draft` a draft is " +
      "accepted as it is, and `warnings` (same shape) say what publishing it would refuse.",
    tag,
    errors: [404],
  }),
  publish: operation({
    scope: "posts:write",
    operationId: "publishDrafts",
    summary: "Publish or schedule drafts",
    description:
      "Takes drafts out of `draft`: each is named with the `version` it was last seen at and " +
      "the destination to publish to, and goes out `now`, in the `queue` or at an exact time. " +
      "Needs `confirmed: true`, a live key and an Idempotency-Key; a stale version is 409 " +
      "`public_version_conflict`. In a workspace with `approval_required`, a credential without " +
      "`posts:approve` gets 202: the drafts stay drafts with `approval.status: requested`.",
    tag,
    errors: [402, 404, 409, 422],
    idempotency: "required",
  }),
  move: operation({
    scope: "posts:write",
    operationId: "movePosts",
    summary: "Move queued posts to a window on another date",
    description:
      "Moves queued posts to the posting windows of `local_date`. Each post is named with the " +
      "`scheduled_at` the caller last saw (`expected_scheduled_at`); a post that moved since is " +
      "a 409.",
    tag,
    errors: [404, 409, 422],
    idempotency: "optional",
  }),
  get: operation({
    scope: "posts:read",
    operationId: "getPost",
    summary: "Get a post",
    description:
      "One post: its state, the actions available now, payload, schedule, receipts of what was " +
      "published and the last error; `include=attempts` adds its publishing attempts. Its ETag " +
      "is what If-Match expects.",
    tag,
    errors: [404],
  }),
  patch: operation({
    scope: "posts:write",
    operationId: "updateDraft",
    summary: "Edit a draft's body or assets",
    description:
      "Changes a draft's body items, its asset placements or both. If-Match with the post's " +
      "current ETag is required (428 without it, 412 when stale); a post that is no longer a " +
      "draft is 409.",
    tag,
    errors: [404, 409, 422],
    ifMatch: "required",
  }),
  delete: operation({
    scope: "posts:write",
    operationId: "deleteDraft",
    summary: "Delete a draft",
    description:
      "Deletes a draft; answers `{id, object: post, deleted: true}`. Needs If-Match with its " +
      "current ETag and an Idempotency-Key; a post already submitted is refused with 409.",
    tag,
    errors: [404, 409],
    idempotency: "required",
    ifMatch: "required",
  }),
  cancel: operation({
    scope: "posts:write",
    operationId: "cancelPost",
    summary: "Cancel a post that has not gone out",
    description:
      "Stops a post that has not gone out (preparing, scheduled, ready, missed or needs-attention): " +
      "it ends `cancelled`. Other states are 409; `available_actions` lists `cancel` when it is allowed.",
    tag,
    errors: [404, 409],
    idempotency: "optional",
  }),
  retry: operation({
    scope: "posts:write",
    operationId: "retryPost",
    summary: "Send a failed, missed or needs-attention post again",
    description:
      "Publishes the post again now. When its last outcome is unknown (`retry_safety` unsafe) " +
      "the network may already hold it, and `acknowledge_duplicate_risk: true` is required.",
    tag,
    errors: [404, 409, 422],
    idempotency: "optional",
  }),
  reschedule: operation({
    scope: "posts:write",
    operationId: "reschedulePost",
    summary: "Move a post to a new time",
    description:
      "Sets a new exact time (`scheduled_at` with a UTC offset; `time_zone` names the zone it " +
      "is shown in), while `available_actions` lists `reschedule`. As for retry, " +
      "`acknowledge_duplicate_risk` is needed when the post's last outcome is unknown.",
    tag,
    errors: [402, 404, 409, 422],
    idempotency: "optional",
  }),
  getQueue: operation({
    scope: "posts:read",
    operationId: "getQueue",
    summary: "Get the queue's posting windows",
    description:
      "The workspace's weekly posting windows (weekday 1 = Monday to 7 = Sunday, local time in " +
      "the workspace's time zone) that `when: queue` fills in order.",
    tag,
    errors: [404],
  }),
  putQueue: operation({
    scope: "posts:write",
    operationId: "replaceQueue",
    summary: "Replace the queue's posting windows",
    description:
      "Sets every posting window of the workspace at once: the windows not in the list are " + "removed.",
    tag,
    errors: [404],
  }),
};
const PostSetCreated = { 201: PostSet, 202: PostSet };

/**
 * Posts: create (draft, now, exact, queue), list, get, edit and delete drafts, publish, move, cancel,
 * retry, reschedule, queue windows.
 */
export function postRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .post("/posts", handler(h, createPostSet), {
      ...doc.create,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: CreatePostsBody,
      response: PostSetCreated,
    })
    .get("/posts", handler(h, listPostPage), {
      ...doc.list,
      params: WorkspaceParams,
      query: ListPostsQuery,
      response: { 200: listingSchema(Post) },
    })
    .post("/posts/validate", handler(h, validatePostSet), {
      ...doc.validate,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: CreatePostsBody,
      response: { 200: PostValidation },
    })
    .post("/posts/publish", handler(h, publishDraftSet), {
      ...doc.publish,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: PublishDraftsBody,
      response: PostSetCreated,
    })
    .post("/posts/move", handler(h, movePostSet), {
      ...doc.move,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: MovePostsBody,
      response: { 200: PostSet },
    })
    .get("/posts/:post_id", handler(h, getPost), {
      ...doc.get,
      params: PostParams,
      query: GetPostQuery,
      response: { 200: Post },
    })
    .patch("/posts/:post_id", handler(h, patchPost), {
      ...doc.patch,
      parse: JSON_PARSER,
      params: PostParams,
      body: PatchDraftBody,
      response: { 200: Post },
    })
    .delete("/posts/:post_id", handler(h, deletePost), {
      ...doc.delete,
      params: PostParams,
      response: { 200: DeletedPost },
    })
    .post("/posts/:post_id/cancel", handler(h, cancelOnePost), {
      ...doc.cancel,
      parse: JSON_PARSER,
      params: PostParams,
      body: CancelPostBody,
      response: { 200: Post },
    })
    .post("/posts/:post_id/retry", handler(h, retryOnePost), {
      ...doc.retry,
      parse: JSON_PARSER,
      params: PostParams,
      body: RetryPostBody,
      response: { 200: Post },
    })
    .post("/posts/:post_id/reschedule", handler(h, rescheduleOnePost), {
      ...doc.reschedule,
      parse: JSON_PARSER,
      params: PostParams,
      body: ReschedulePostBody,
      response: { 200: Post },
    })
    .get("/queue", handler(h, getQueue), {
      ...doc.getQueue,
      params: WorkspaceParams,
      response: { 200: Queue },
    })
    .put("/queue", handler(h, putQueue), {
      ...doc.putQueue,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: PutQueueBody,
      response: { 200: Queue },
    });
}
