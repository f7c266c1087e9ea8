import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed, Nullable, PageQuery } from "./common-schemas.ts";
import { COMMENT_MAX, REVIEW_LINK_DAYS } from "../../modules/approvals/limits.ts";

const ApprovalStatus = t.Union([
  t.Literal("requested"),
  t.Literal("approved"),
  t.Literal("changes_requested"),
]);

/** Who did something: a signed-in person, an API key or grant, or a review link's visitor. */
export const Author = t.Object(
  {
    kind: t.Union([t.Literal("user"), t.Literal("credential"), t.Literal("reviewer")]),
    name: t.String(),
  },
  { title: "Author" },
);

/** A post's approval (the post's `approval`, null when it was never sent for approval). */
export const Approval = t.Object(
  {
    status: ApprovalStatus,
    requested_when: t.String({
      description: "The Create Post `when` the post asked for: approving applies it (now, queue or a time)",
    }),
    requested_time_zone: Nullable(t.String()),
    requested_at: Timestamp,
    requested_by: Author,
    history: t.Array(
      t.Object({ status: ApprovalStatus, at: Timestamp, by: Author }, { title: "ApprovalStep" }),
      { description: "Every step of the approval, oldest first" },
    ),
  },
  { title: "PostApproval" },
);

const CommentText = t.String({ minLength: 1, maxLength: COMMENT_MAX, pattern: "\\S" });

/** Body of approve. */
export const ApprovePostBody = Closed(
  {
    confirmed: t.Optional(t.Boolean({ description: "must be true" })),
    version: Type.Integer({ minimum: 1, description: "The post's version as you last saw it" }),
  },
  { title: "ApprovePostRequest", examples: [{ confirmed: true, version: 1 }] },
);

/** Body of reject. */
export const RejectPostBody = Closed(
  {
    confirmed: t.Optional(t.Boolean({ description: "must be true" })),
    comment: CommentText,
  },
  {
    title: "RejectPostRequest",
    examples: [{ confirmed: true, comment: "Please use the new product name in the first line." }],
  },
);

/** A comment on a post. */
export const PostComment = t.Object(
  {
    id: t.String(),
    object: t.Literal("post_comment"),
    post_id: t.String(),
    author: Author,
    body: t.String(),
    created_at: Timestamp,
  },
  { title: "PostComment" },
);

/** Body of POST comments. */
export const CreateCommentBody = Closed(
  { body: CommentText },
  { title: "CreatePostCommentRequest", examples: [{ body: "Can we add the launch video here?" }] },
);

/** The comment listing's query. */
export const ListCommentsQuery = PageQuery;

/** A review link; `url` is shown once, in the answer that creates it (null afterwards). */
export const ReviewLink = t.Object(
  {
    id: t.String(),
    object: t.Literal("review_link"),
    url: Nullable(
      t.String({ description: "<HERALD_BASE_URL>/review/{token}; only in the creation's answer" }),
    ),
    group: t.String(),
    expires_at: Timestamp,
    created_at: Timestamp,
    created_by: Author,
  },
  { title: "ReviewLink" },
);

/** Body of POST review-links. */
export const CreateReviewLinkBody = Closed(
  {
    group: t.String({ minLength: 1, maxLength: 200 }),
    expires_in_days: t.Optional(
      Type.Integer({
        minimum: REVIEW_LINK_DAYS.min,
        maximum: REVIEW_LINK_DAYS.max,
        description: "1 to 30, default 30",
      }),
    ),
  },
  { title: "CreateReviewLinkRequest", examples: [{ group: "spring-launch", expires_in_days: 7 }] },
);

/** Path of one review link. */
export const ReviewLinkParams = t.Object({ workspace_id: t.String(), review_link_id: t.String() });
