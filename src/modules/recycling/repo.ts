// The recycled copies of evergreen posts (`posts` rows with `recycled_from`).
import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../db/open.ts";
import { tablesOf } from "../../db/tables.ts";

/** What an original's presentation reads of each of its copies. */
export interface RecycledCopy {
  id: string;
  recycledFrom: string;
  recycleNumber: number;
  state: string;
  scheduledAt: number | null;
}

/** The copies of these originals, by copy number (one seek each along the copies' unique index). */
export async function listRecycledCopies(db: Db, originalIds: string[]): Promise<RecycledCopy[]> {
  if (originalIds.length === 0) return [];
  const { posts } = tablesOf(db);
  const rows = await db
    .select({
      id: posts.id,
      recycledFrom: posts.recycledFrom,
      recycleNumber: posts.recycleNumber,
      state: posts.state,
      scheduledAt: posts.scheduledAt,
    })
    .from(posts)
    .where(inArray(posts.recycledFrom, originalIds))
    .orderBy(asc(posts.recycledFrom), asc(posts.recycleNumber));
  return rows.map((r) => ({ ...r, recycledFrom: r.recycledFrom!, recycleNumber: r.recycleNumber! }));
}

/** Whether copy `number` of an original exists already. */
export async function recycledCopyExists(db: Db, originalId: string, number: number): Promise<boolean> {
  const { posts } = tablesOf(db);
  const rows = await db
    .select({ id: posts.id })
    .from(posts)
    .where(and(eq(posts.recycledFrom, originalId), eq(posts.recycleNumber, number)))
    .limit(1);
  return rows.length > 0;
}
