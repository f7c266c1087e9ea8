import { eq } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { posts } from "../../db/schema.ts";
import type { PostEdit, PostRow } from "../posts/repo.ts";
import { editPostIfStill } from "../posts/transition.ts";

/**
 * A non-state edit of a post this process is publishing (attempt count, lease renewal); false when
 * the lease was lost (another process recovered the post), in which case nothing is written.
 * State changes go through `transitionPost` with `leasedBy`.
 */
export async function updateLeasedPost(
  db: Db,
  id: string,
  owner: string,
  changes: PostEdit,
): Promise<boolean> {
  return editPostIfStill(db, id, { state: "processing", leasedBy: owner }, changes);
}

/** Posts waiting for their assets. */
export async function listPreparing(db: Db, limit: number): Promise<PostRow[]> {
  return db.select().from(posts).where(eq(posts.state, "preparing")).limit(limit);
}
