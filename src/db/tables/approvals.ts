// Tables of approvals and review (issue 30): a post's approval, its history, the comments on posts
// and the review links a client opens without signing in.
import type { TableBuilders } from "./builders.ts";
import type { AccountTables } from "./accounts.ts";
import type { PostTables } from "./posts.ts";

/** Who did something to a post: a signed-in person, an API key or grant, or a review link's visitor. */
export interface StoredAuthor {
  kind: "user" | "credential" | "reviewer";
  name: string;
  /** The credential's id (a key, grant or session); a reviewer's review link id. */
  id: string | null;
}

/** The approval and review tables. */
export function defineApprovalTables(
  b: TableBuilders,
  { workspaces, posts }: Pick<AccountTables, "workspaces"> & Pick<PostTables, "posts">,
) {
  /** A post's approval: one row per post that was ever sent for approval (deleted with the post). */
  const postApprovals = b.table(
    "post_approvals",
    {
      postId: b
        .text("post_id")
        .primaryKey()
        .references(() => posts.id, { onDelete: "cascade" }),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      /** `requested`, `approved` or `changes_requested`. */
      status: b.text("status", { enum: ["requested", "approved", "changes_requested"] }).notNull(),
      /** The Create Post `when` (and `time_zone`) the post would have had: what approving applies. */
      requestedWhen: b.json("requested_when").$type<{ when: string; time_zone?: string }>().notNull(),
      requestedAt: b.integer("requested_at").notNull(),
      requestedBy: b.json("requested_by").$type<StoredAuthor>().notNull(),
      updatedAt: b.integer("updated_at").notNull(),
    },
    (t) => [b.index("post_approvals_workspace_status").on(t.workspaceId, t.status, t.postId)],
  );

  /** Each step of a post's approval (requested, approved, changes requested), oldest first. */
  const postApprovalSteps = b.table(
    "post_approval_steps",
    {
      id: b.text("id").primaryKey(),
      postId: b
        .text("post_id")
        .notNull()
        .references(() => posts.id, { onDelete: "cascade" }),
      status: b.text("status", { enum: ["requested", "approved", "changes_requested"] }).notNull(),
      by: b.json("by").$type<StoredAuthor>().notNull(),
      at: b.integer("at").notNull(),
    },
    (t) => [b.index("post_approval_steps_post").on(t.postId, t.id)],
  );

  /** A comment on a post: a team note, a rejection's reason or a reviewer's words. */
  const postComments = b.table(
    "post_comments",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      postId: b
        .text("post_id")
        .notNull()
        .references(() => posts.id, { onDelete: "cascade" }),
      authorKind: b.text("author_kind", { enum: ["user", "credential", "reviewer"] }).notNull(),
      authorName: b.text("author_name").notNull(),
      /** The credential (or review link) that wrote it. */
      authorId: b.text("author_id"),
      body: b.text("body").notNull(),
      createdAt: b.integer("created_at").notNull(),
    },
    (t) => [b.index("post_comments_post").on(t.postId, t.id)],
  );

  /** A link a client opens to review a group's posts; only the token's SHA-256 is stored. */
  const reviewLinks = b.table(
    "review_links",
    {
      id: b.text("id").primaryKey(),
      workspaceId: b
        .text("workspace_id")
        .notNull()
        .references(() => workspaces.id),
      groupKey: b.text("group_key").notNull(),
      tokenHash: b.text("token_hash").notNull(),
      expiresAt: b.integer("expires_at").notNull(),
      createdBy: b.json("created_by").$type<StoredAuthor>().notNull(),
      createdAt: b.integer("created_at").notNull(),
      /** Set by DELETE: the link answers 404 from then on. */
      deletedAt: b.integer("deleted_at"),
    },
    (t) => [
      b.uniqueIndex("review_links_token_hash").on(t.tokenHash),
      b.index("review_links_workspace").on(t.workspaceId, t.id),
    ],
  );

  return { postApprovals, postApprovalSteps, postComments, reviewLinks };
}
