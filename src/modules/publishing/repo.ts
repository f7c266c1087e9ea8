import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { posts } from "../../db/schema.ts";
import type { PostRow } from "../posts/repo.ts";

/**
 * Applies changes to a post this process is publishing; false when the lease was lost (another
 * process recovered the post), in which case nothing is written.
 */
export function updateLeasedPost(db: Db, id: string, owner: string, changes: Partial<PostRow>): boolean {
  return db.update(posts).set({ ...changes, version: sql`${posts.version} + 1` })
    .where(and(eq(posts.id, id), eq(posts.leaseOwner, owner), eq(posts.state, "processing")))
    .returning({ id: posts.id }).all().length === 1;
}

/** Applies changes to a post only if it is still in `state` (the engine's compare-and-set). */
export function updatePostInState(db: Db, id: string, state: string, changes: Partial<PostRow>): boolean {
  return db.update(posts).set({ ...changes, version: sql`${posts.version} + 1` })
    .where(and(eq(posts.id, id), eq(posts.state, state)))
    .returning({ id: posts.id }).all().length === 1;
}

/** Posts waiting for their assets. */
export function listPreparing(db: Db, limit: number): PostRow[] {
  return db.select().from(posts).where(eq(posts.state, "preparing")).limit(limit).all();
}
