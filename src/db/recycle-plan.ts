/**
 * An evergreen post's recycling plan, stored on the original (`posts.recycle`): `count` copies
 * follow it, each `every_days` after the publication before, with bodies from `variations` in turn.
 */
export interface RecyclePlan {
  every_days: number;
  count: number;
  variations: string[][];
}
