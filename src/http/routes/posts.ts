import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import type { Actor } from "../../core/actor.ts";
import { listingSchema, operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { invalid } from "../../core/problem.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import {
  cancelPost,
  deleteDraft,
  movePostsInQueue,
  patchDraft,
  publishDrafts,
  requirePost,
  reschedulePost,
  retryPost,
} from "../../modules/posts/actions.ts";
import { createPosts, validatePosts } from "../../modules/posts/create.ts";
import { postEtag, presentPosts } from "../../modules/posts/present.ts";
import { listQueueWindows, putQueueWindows } from "../../modules/posts/queue.ts";
import { listPosts, type PostRow } from "../../modules/posts/repo.ts";
import { parseWhen } from "../../modules/posts/rules.ts";
import { CreatePostsBody, ListPostsQuery, Post, PostSet, Queue } from "./posts-schemas.ts";
import { isTerminal, isActionRequired, VIEWS, type PostState } from "../../modules/posts/states.ts";

const WorkspaceParams = t.Object({ workspace_id: t.String() });
const PostParams = t.Object({ workspace_id: t.String(), post_id: t.String() });
const Confirmed = t.Object({ confirmed: t.Optional(t.Boolean()) }, { additionalProperties: false });
const tag = "Posts";

/** The answer of POST /posts/validate. */
export const PostValidation = t.Object({
  object: t.Literal("post_validation"),
  valid: t.Boolean(),
  errors: t.Array(
    t.Object({
      pointer: t.String(),
      code: t.String(),
      detail: t.String(),
      channel: t.Union([t.String(), t.Null()]),
    }),
  ),
});

/** A post response with its ETag. */
async function postResponse(
  h: Herald,
  row: PostRow,
  includeAttempts = false,
  status = 200,
): Promise<Response> {
  const [post] = await presentPosts(h.db, [row], { includeAttempts });
  return resourceResponse(post, status, { etag: postEtag(row) });
}

/**
 * A post set response: 202 with Retry-After while provider work is still active for an immediate
 * publication (the caller polls the posts), 201 otherwise.
 */
async function postSetResponse(
  h: Herald,
  group: string,
  rows: PostRow[],
  immediate: boolean,
): Promise<Response> {
  const active =
    immediate &&
    rows.some((r) => !isTerminal(r.state as PostState) && !isActionRequired(r.state as PostState));
  const body = {
    object: "post_set",
    group,
    posts: await presentPosts(h.db, rows, { includeAttempts: false }),
  };
  return new Response(JSON.stringify(body), {
    status: active ? 202 : 201,
    headers: { "content-type": "application/json", ...(active ? { "retry-after": "1" } : {}) },
  });
}

/** The handler of a verb on one post (cancel, retry, reschedule): run idempotently, answer the post. */
function onePostVerb<Input>(
  h: Herald,
  verb: (args: {
    h: Herald;
    actor: Actor;
    workspaceId: string;
    id: string;
    input: Input;
  }) => Promise<PostRow>,
) {
  return (c: {
    actor: Actor;
    params: { workspace_id: string; post_id: string };
    body: Input;
    request: Request;
  }) =>
    runIdempotent(
      h,
      { accountId: c.actor.accountId, request: c.request, body: c.body, required: false, atomic: true },
      async () =>
        postResponse(
          h,
          await verb({
            h,
            actor: c.actor,
            workspaceId: c.params.workspace_id,
            id: c.params.post_id,
            input: c.body,
          }),
        ),
    );
}

function timeFilter(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = parseWhen(value);
  if (!parsed || parsed.mode !== "exact")
    throw invalid(`/${name}`, "must be an ISO 8601 time with a UTC offset", name);
  return parsed.at;
}

/**
 * Posts: create (draft, now, exact, queue), list, get, edit and delete drafts, publish, move, cancel,
 * retry, reschedule, queue windows.
 */
export function postRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .post(
      "/posts",
      async ({ actor, workspace: ws, request, body }) => {
        const workspace = ws!;
        return runIdempotent(
          h,
          { accountId: actor.accountId, request, body, required: body.when !== "draft", atomic: true },
          async () => {
            const result = await createPosts({ h, actor, workspace, input: body });
            return postSetResponse(h, body.group, result.rows, result.immediate);
          },
        );
      },
      {
        ...operation({
          scope: "posts:write",
          summary: "Create posts: drafts, published now, at a time, or in the queue",
          tag,
          errors: [402, 404, 409, 422],
          idempotency: "optional",
          description:
            "Idempotency-Key is required to publish or schedule, optional for drafts. 202 with " +
            "Retry-After while provider work is active.",
        }),
        parse: JSON_PARSER,
        params: WorkspaceParams,
        body: CreatePostsBody,
        response: { 201: PostSet, 202: PostSet },
      },
    )
    .get(
      "/posts",
      async ({ actor, workspace: ws, request, query }) => {
        const workspace = ws!;
        const filter = {
          states: query.state ? [query.state as PostState] : VIEWS[query.view ?? "all"]!,
          channel: query.channel,
          group: query.group,
          destinationId: query.destination_id,
          createdAfter: timeFilter(query.created_after, "created_after"),
          scheduledBefore: timeFilter(query.scheduled_before, "scheduled_before"),
        };
        if (
          query.state &&
          query.view &&
          query.view !== "all" &&
          !VIEWS[query.view]!.includes(query.state as PostState)
        ) {
          throw invalid("/state", `is not part of view ${query.view}`, "state");
        }
        const scope = `posts:${workspace.id}:${actor.credentialId}:${JSON.stringify({ ...query, limit: undefined, after: undefined, include: undefined })}`;
        const page = parsePageQuery(h, query, scope);
        const rows = await listPosts(h.db, workspace.id, filter, page.afterId, page.limit);
        const presented = new Map(
          (await presentPosts(h.db, rows, { includeAttempts: query.include === "attempts" })).map((p) => [
            p.id as string,
            p,
          ]),
        );
        return pageResponse(h, request, rows, page, scope, (row) => presented.get(row.id));
      },
      {
        ...operation({
          scope: "posts:read",
          summary: "List posts (views, filters, include=attempts)",
          tag,
          errors: [404],
        }),
        params: WorkspaceParams,
        query: ListPostsQuery,
        response: { 200: listingSchema(Post) },
      },
    )
    .post(
      "/posts/validate",
      async ({ actor, workspace, body }) =>
        await validatePosts({ h, actor, workspace: workspace!, input: body }),
      {
        ...operation({
          scope: "posts:read",
          summary: "Check a Create Post request without storing anything",
          tag,
          errors: [404],
        }),
        parse: JSON_PARSER,
        params: WorkspaceParams,
        body: CreatePostsBody,
        response: {
          200: PostValidation,
        },
      },
    )
    .post(
      "/posts/publish",
      async ({ actor, workspace: ws, request, body }) => {
        const workspace = ws!;
        return runIdempotent(
          h,
          { accountId: actor.accountId, request, body, required: true, atomic: true },
          async () => {
            const result = await publishDrafts({ h, actor, workspace, input: body });
            return postSetResponse(h, result.rows[0]?.groupKey ?? "", result.rows, result.immediate);
          },
        );
      },
      {
        ...operation({
          scope: "posts:write",
          summary: "Publish or schedule drafts",
          tag,
          errors: [402, 404, 409, 422],
          idempotency: "required",
        }),
        parse: JSON_PARSER,
        params: WorkspaceParams,
        body: t.Object(
          {
            confirmed: t.Optional(t.Boolean()),
            when: t.String({ minLength: 1, maxLength: 64 }),
            time_zone: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
            posts: t.Array(
              t.Object(
                {
                  id: t.String({ minLength: 1 }),
                  version: Type.Integer({ minimum: 1 }),
                  destination_id: t.String({ minLength: 1, maxLength: 200 }),
                },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: 100 },
            ),
          },
          { additionalProperties: false },
        ),
        response: { 201: PostSet, 202: PostSet },
      },
    )
    .post(
      "/posts/move",
      async ({ actor, workspace: ws, request, body }) => {
        const workspace = ws!;
        return runIdempotent(
          h,
          { accountId: actor.accountId, request, body, required: false, atomic: true },
          async () => {
            const rows = await movePostsInQueue({ h, actor, workspace, input: body });
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
      },
      {
        ...operation({
          scope: "posts:write",
          summary: "Move queued posts to a window on another date",
          tag,
          errors: [404, 409, 422],
          idempotency: "optional",
        }),
        parse: JSON_PARSER,
        params: WorkspaceParams,
        body: t.Object(
          {
            confirmed: t.Optional(t.Boolean()),
            local_date: t.String({ minLength: 10, maxLength: 10 }),
            posts: t.Array(
              t.Object(
                {
                  id: t.String({ minLength: 1 }),
                  expected_scheduled_at: t.String({ minLength: 1, maxLength: 64 }),
                },
                { additionalProperties: false },
              ),
              { minItems: 1, maxItems: 100 },
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: PostSet },
      },
    )
    .get(
      "/posts/:post_id",
      async ({ params, query }) => {
        return postResponse(
          h,
          await requirePost(h.db, params.workspace_id, params.post_id),
          query.include === "attempts",
        );
      },
      {
        ...operation({ scope: "posts:read", summary: "Get a post", tag, errors: [404] }),
        params: PostParams,
        query: t.Object({ include: t.Optional(t.Literal("attempts")) }),
        response: { 200: Post },
      },
    )
    .patch(
      "/posts/:post_id",
      async ({ actor, params, body, request }) => {
        return postResponse(
          h,
          await patchDraft({
            h,
            actor,
            workspaceId: params.workspace_id,
            id: params.post_id,
            input: body,
            ifMatch: request.headers.get("if-match"),
          }),
        );
      },
      {
        ...operation({
          scope: "posts:write",
          summary: "Edit a draft's body or assets",
          tag,
          errors: [404, 409, 422],
          ifMatch: "required",
        }),
        parse: JSON_PARSER,
        params: PostParams,
        body: t.Object(
          {
            body: t.Optional(t.Array(t.String({ maxLength: 100_000 }), { minItems: 1, maxItems: 100 })),
            asset_items: t.Optional(
              t.Array(
                t.Object(
                  {
                    asset_id: t.String({ minLength: 1, maxLength: 200 }),
                    item_index: Type.Integer({ minimum: 0, maximum: 99 }),
                  },
                  { additionalProperties: false },
                ),
                { maxItems: 100 },
              ),
            ),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        response: { 200: Post },
      },
    )
    .delete(
      "/posts/:post_id",
      async ({ actor, params, request }) => {
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
      },
      {
        ...operation({
          scope: "posts:write",
          summary: "Delete a draft",
          tag,
          errors: [404, 409],
          idempotency: "required",
          ifMatch: "required",
        }),
        params: PostParams,
        response: { 200: t.Object({ id: t.String(), object: t.Literal("post"), deleted: t.Literal(true) }) },
      },
    )
    .post("/posts/:post_id/cancel", onePostVerb(h, cancelPost), {
      ...operation({
        scope: "posts:write",
        summary: "Cancel a post that has not gone out",
        tag,
        errors: [404, 409],
        idempotency: "optional",
      }),
      parse: JSON_PARSER,
      params: PostParams,
      body: Confirmed,
      response: { 200: Post },
    })
    .post("/posts/:post_id/retry", onePostVerb(h, retryPost), {
      ...operation({
        scope: "posts:write",
        summary: "Send a failed, missed or needs-attention post again",
        tag,
        errors: [404, 409, 422],
        idempotency: "optional",
      }),
      parse: JSON_PARSER,
      params: PostParams,
      body: t.Object(
        { confirmed: t.Optional(t.Boolean()), acknowledge_duplicate_risk: t.Optional(t.Boolean()) },
        { additionalProperties: false },
      ),
      response: { 200: Post },
    })
    .post("/posts/:post_id/reschedule", onePostVerb(h, reschedulePost), {
      ...operation({
        scope: "posts:write",
        summary: "Move a post to a new time",
        tag,
        errors: [402, 404, 409, 422],
        idempotency: "optional",
      }),
      parse: JSON_PARSER,
      params: PostParams,
      body: t.Object(
        {
          confirmed: t.Optional(t.Boolean()),
          scheduled_at: t.String({ minLength: 1, maxLength: 64 }),
          time_zone: t.Optional(t.String({ minLength: 1, maxLength: 64 })),
          acknowledge_duplicate_risk: t.Optional(
            t.Boolean({
              description:
                "Needed when the post's last outcome is unknown (retry_safety unsafe), as for retry.",
            }),
          ),
        },
        { additionalProperties: false },
      ),
      response: { 200: Post },
    })
    .get(
      "/queue",
      async ({ workspace: ws }) => {
        const workspace = ws!;
        return resourceResponse(presentQueue(workspace.timeZone, await listQueueWindows(h.db, workspace.id)));
      },
      {
        ...operation({ scope: "posts:read", summary: "Get the queue's posting windows", tag, errors: [404] }),
        params: WorkspaceParams,
        response: { 200: Queue },
      },
    )
    .put(
      "/queue",
      async ({ actor, workspace: ws, body }) => {
        const workspace = ws!;
        const seen = new Set<string>();
        body.windows.forEach((w, i) => {
          const key = `${w.weekday}|${w.local_time}`;
          if (seen.has(key)) throw invalid(`/windows/${i}`, "repeats another window");
          seen.add(key);
        });
        const windows = await putQueueWindows({ h, actor, workspaceId: workspace.id, windows: body.windows });
        return resourceResponse(presentQueue(workspace.timeZone, windows));
      },
      {
        ...operation({
          scope: "posts:write",
          summary: "Replace the queue's posting windows",
          tag,
          errors: [404],
        }),
        parse: JSON_PARSER,
        params: WorkspaceParams,
        body: t.Object(
          {
            windows: t.Array(
              t.Object(
                {
                  weekday: Type.Integer({ minimum: 1, maximum: 7 }),
                  local_time: t.String({ pattern: "^([01][0-9]|2[0-3]):[0-5][0-9]$" }),
                },
                { additionalProperties: false },
              ),
              { maxItems: 500 },
            ),
          },
          { additionalProperties: false },
        ),
        response: { 200: Queue },
      },
    );
}

function presentQueue(timeZone: string, windows: Awaited<ReturnType<typeof listQueueWindows>>) {
  return {
    object: "queue" as const,
    time_zone: timeZone,
    windows: windows.map((w) => ({ id: w.id, weekday: w.weekday, local_time: w.localTime })),
  };
}
