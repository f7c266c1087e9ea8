import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { listingSchema, operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { pageResponse, parsePageQuery } from "../pagination.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { commentOnPost } from "../../modules/approvals/comments.ts";
import { approvePost, rejectPost } from "../../modules/approvals/decide.ts";
import { presentComment, presentReviewLink } from "../../modules/approvals/present.ts";
import { listComments, listReviewLinks } from "../../modules/approvals/repo.ts";
import { createReviewLink, deleteReviewLink } from "../../modules/approvals/review-links.ts";
import { requirePost } from "../../modules/posts/actions.ts";
import { postEtag, presentPosts } from "../../modules/posts/present.ts";
import type { PostRow } from "../../modules/posts/repo.ts";
import { handler, workspaceOf, type RouteContext } from "./context.ts";
import {
  ApprovePostBody,
  CreateCommentBody,
  CreateReviewLinkBody,
  ListCommentsQuery,
  PostComment,
  RejectPostBody,
  ReviewLink,
  ReviewLinkParams,
} from "./approvals-schemas.ts";
import { Deleted, PageQuery, WorkspaceParams } from "./common-schemas.ts";
import { Post, PostParams } from "./posts-schemas.ts";

type PostContext<Body = unknown, Query = unknown> = RouteContext<Body, Query, Static<typeof PostParams>>;

/** The post after a decision, with its ETag. */
async function postAnswer(h: Herald, row: PostRow): Promise<Response> {
  const [post] = await presentPosts(h.db, [row], { includeAttempts: false });
  return resourceResponse(post, 200, { etag: postEtag(row) });
}

/** POST …/posts/{post}/approve. */
function approve(h: Herald, c: PostContext<Static<typeof ApprovePostBody>>) {
  const { actor, request, body, params } = c;
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body, required: false, atomic: true },
    async () =>
      postAnswer(
        h,
        await approvePost({ h, actor, workspace: workspaceOf(c), id: params.post_id, input: body }),
      ),
  );
}

/** POST …/posts/{post}/reject. */
function reject(h: Herald, c: PostContext<Static<typeof RejectPostBody>>) {
  const { actor, request, body, params } = c;
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body, required: false, atomic: true },
    async () =>
      postAnswer(
        h,
        await rejectPost({ h, actor, workspace: workspaceOf(c), id: params.post_id, input: body }),
      ),
  );
}

/** GET …/posts/{post}/comments: newest first, paged. */
async function listPostComments(h: Herald, c: PostContext<unknown, Static<typeof ListCommentsQuery>>) {
  const { actor, request, query, params } = c;
  const post = await requirePost(h.db, params.workspace_id, params.post_id);
  const scope = `post-comments:${post.id}:${actor.credentialId}`;
  const page = parsePageQuery(h, query, scope);
  const rows = await listComments(h.db, post.id, page.afterId, page.limit);
  return pageResponse(h, request, rows, page, scope, presentComment);
}

/** POST …/posts/{post}/comments: 201 with the comment. */
function createPostComment(h: Herald, c: PostContext<Static<typeof CreateCommentBody>>) {
  const { actor, request, body, params } = c;
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body, required: false, atomic: true },
    async () => {
      const row = await commentOnPost({
        h,
        actor,
        workspaceId: params.workspace_id,
        id: params.post_id,
        input: body,
      });
      return resourceResponse(presentComment(row), 201);
    },
  );
}

/**
 * POST …/review-links: 201 with the URL (shown this once). Not replayed by Idempotency-Key: a stored
 * answer would keep the token, which Herald keeps only hashed; a repeated request makes another link.
 */
async function createLink(h: Herald, c: RouteContext<Static<typeof CreateReviewLinkBody>>) {
  const { actor, body } = c;
  const { row, url } = await createReviewLink({ h, actor, workspaceId: workspaceOf(c).id, input: body });
  return resourceResponse(presentReviewLink(row, url), 201);
}

/** GET …/review-links: the live links, newest first (expired ones until deleted). */
async function listLinks(h: Herald, c: RouteContext<unknown, Static<typeof PageQuery>>) {
  const { actor, request, query } = c;
  const workspace = workspaceOf(c);
  const scope = `review-links:${workspace.id}:${actor.credentialId}`;
  const page = parsePageQuery(h, query, scope);
  const rows = await listReviewLinks(h.db, workspace.id, page.afterId, page.limit);
  return pageResponse(h, request, rows, page, scope, (row) => presentReviewLink(row, null));
}

/** DELETE …/review-links/{id}. */
function deleteLink(h: Herald, c: RouteContext<unknown, unknown, Static<typeof ReviewLinkParams>>) {
  const { actor, request, params } = c;
  return runIdempotent(
    h,
    { accountId: actor.accountId, request, body: null, required: false, atomic: true },
    async () => {
      const row = await deleteReviewLink({
        h,
        actor,
        workspaceId: params.workspace_id,
        id: params.review_link_id,
      });
      return resourceResponse({ id: row.id, object: "review_link", deleted: true });
    },
  );
}

const tag = "Approvals";
const doc = {
  approve: operation({
    scope: "posts:approve",
    operationId: "approvePost",
    summary: "Approve a post awaiting approval",
    description:
      "Approves one draft whose `approval.status` is `requested`: it leaves `draft` for the state " +
      "its `approval.requested_when` gives, as publish drafts would move it now, and " +
      "`approval.status` becomes `approved`. Needs `confirmed: true` and the `version` you last saw " +
      "(409 `public_version_conflict` when it changed); a post not awaiting approval is 409 " +
      "`public_conflict`; a requested time that has passed is 422.",
    tag,
    errors: [402, 404, 409, 422],
    idempotency: "optional",
  }),
  reject: operation({
    scope: "posts:approve",
    operationId: "rejectPost",
    summary: "Request changes to a post awaiting approval",
    description:
      "Sends a post awaiting approval back to its author: it stays a draft with `approval.status: " +
      "changes_requested`, and `comment` (required) is added to its comments. Publishing it again " +
      "asks for approval again.",
    tag,
    errors: [404, 409],
    idempotency: "optional",
  }),
  listComments: operation({
    scope: "posts:read",
    operationId: "listPostComments",
    summary: "List a post's comments",
    description:
      "The post's comments, newest first: team notes, reasons given when changes were requested, " +
      "and reviewers' words from review links. `author.kind` is `user`, `credential` or `reviewer`.",
    tag,
    errors: [404],
  }),
  createComment: operation({
    scope: "posts:write",
    operationId: "createPostComment",
    summary: "Comment on a post",
    description: "Adds a team note to a post, authored by the signed-in person or the credential.",
    tag,
    errors: [404],
    idempotency: "optional",
  }),
  createReviewLink: operation({
    scope: "posts:approve",
    operationId: "createReviewLink",
    summary: "Create a review link for a group",
    description:
      "A link a client opens without signing in (`url`, shown only in this answer: the token is " +
      "stored hashed) to see the group's posts and approve them or request changes. " +
      "`expires_in_days` 1 to 30, default 30; the group must have posts in the workspace (404). " +
      "Idempotency-Key is not honoured: a replayed answer would have to keep the token.",
    tag,
    errors: [404],
  }),
  listReviewLinks: operation({
    scope: "posts:read",
    operationId: "listReviewLinks",
    summary: "List review links",
    description:
      "The workspace's review links not deleted, newest first, expired ones included (`expires_at` " +
      "says which); `url` is null, since only the token's hash is kept.",
    tag,
    errors: [404],
  }),
  deleteReviewLink: operation({
    scope: "posts:approve",
    operationId: "deleteReviewLink",
    summary: "Delete a review link",
    description: "The link's page answers 404 from now on. No If-Match.",
    tag,
    errors: [404],
    idempotency: "optional",
  }),
};

/** Approvals and review: approve, reject, comments on posts, review links. */
export function approvalRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .post("/posts/:post_id/approve", handler(h, approve), {
      ...doc.approve,
      parse: JSON_PARSER,
      params: PostParams,
      body: ApprovePostBody,
      response: { 200: Post },
    })
    .post("/posts/:post_id/reject", handler(h, reject), {
      ...doc.reject,
      parse: JSON_PARSER,
      params: PostParams,
      body: RejectPostBody,
      response: { 200: Post },
    })
    .get("/posts/:post_id/comments", handler(h, listPostComments), {
      ...doc.listComments,
      params: PostParams,
      query: ListCommentsQuery,
      response: { 200: listingSchema(PostComment) },
    })
    .post("/posts/:post_id/comments", handler(h, createPostComment), {
      ...doc.createComment,
      parse: JSON_PARSER,
      params: PostParams,
      body: CreateCommentBody,
      response: { 201: PostComment },
    })
    .post("/review-links", handler(h, createLink), {
      ...doc.createReviewLink,
      parse: JSON_PARSER,
      params: WorkspaceParams,
      body: CreateReviewLinkBody,
      response: { 201: ReviewLink },
    })
    .get("/review-links", handler(h, listLinks), {
      ...doc.listReviewLinks,
      params: WorkspaceParams,
      query: PageQuery,
      response: { 200: listingSchema(ReviewLink) },
    })
    .delete("/review-links/:review_link_id", handler(h, deleteLink), {
      ...doc.deleteReviewLink,
      params: ReviewLinkParams,
      response: { 200: Deleted("review_link") },
    });
}
