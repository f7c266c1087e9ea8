// Two `herald serve` processes on one data directory (on PostgreSQL, one database) publish 300 due
// posts over three destinations (a destination has one publication in flight at a time, so both
// processes have work at once): each exactly once, counted at the fake networks.
import { expect, test } from "bun:test";
import { and, eq, isNotNull } from "drizzle-orm";
import { engineOf, type Db } from "../../src/db/engine.ts";
import { tables } from "../helpers/tables.ts";
import {
  apiClient,
  bootstrapCli,
  connectMastodonVia,
  openShared,
  posted,
  startHerald,
  startMastodonFake,
  tempDataDir,
  waitFor,
  type HeraldProcess,
} from "./engine-helpers.ts";

const { posts: postsTable } = tables;

const GROUPS = 3;
const PER_GROUP = 100;
const TOTAL = GROUPS * PER_GROUP;

test(`two processes on one data dir publish ${TOTAL} due posts exactly once`, async () => {
  const data = await tempDataDir();
  const fakes = await Promise.all(
    Array.from({ length: GROUPS }, () => startMastodonFake({ mediaProcessingPolls: 0 })),
  );
  const servers: HeraldProcess[] = [];
  let db: Db | null = null;
  let sampling = true;
  let sampler: Promise<void> = Promise.resolve();
  try {
    const { workspaceId, apiKey } = await bootstrapCli(data);
    // One publication at a time per process: with three destinations, neither can hold them all.
    const one = { HERALD_PUBLISH_CONCURRENCY: "1" };
    servers.push(...(await Promise.all([startHerald(data, one), startHerald(data, one)])));
    const apis = servers.map((s) => apiClient(() => s.url, apiKey));
    const destinationIds: string[] = [];
    for (const fake of fakes) {
      destinationIds.push(await connectMastodonVia(apis[0]!, workspaceId, fake));
      fake.delayMs = 40; // long enough for both processes to hold work at the same time
    }
    const statuses = () => fakes.flatMap((fake) => fake.statuses);

    const shared = await openShared(data);
    db = shared;
    const owners = new Set<string>();
    const sample = () =>
      shared
        .selectDistinct({ owner: postsTable.leaseOwner })
        .from(postsTable)
        .where(and(eq(postsTable.state, "processing"), isNotNull(postsTable.leaseOwner)));
    sampler = (async () => {
      while (sampling) {
        for (const row of await sample()) owners.add(row.owner!);
        await Bun.sleep(10);
      }
    })();

    const ids: string[] = [];
    for (let g = 0; g < GROUPS; g++) {
      const posts = Array.from({ length: PER_GROUP }, (_, i) => ({
        destination_id: destinationIds[g],
        body: [`bulk ${g}-${i}`],
      }));
      // Half the requests go to each process.
      const r = await apis[g % 2]!(
        "POST",
        `/workspaces/${workspaceId}/posts`,
        { when: "now", confirmed: true, group: `bulk-${g}`, posts },
        { "idempotency-key": `bulk-${g}` },
      );
      expect(r.status).toBe(202);
      ids.push(...r.body.posts.map((p: any) => p.id));
    }
    expect(new Set(ids).size).toBe(TOTAL);

    await waitFor(`${TOTAL} statuses`, () => (statuses().length >= TOTAL ? true : undefined), 90_000, 100);
    // Let anything still in flight land before counting.
    const settled = await waitFor(
      "no post left processing",
      async () => {
        const r = await apis[1]!("GET", `/workspaces/${workspaceId}/posts?view=scheduled&limit=1`);
        return r.body.data.length === 0 ? true : undefined;
      },
      20_000,
      100,
    );
    expect(settled).toBe(true);
    sampling = false;
    await sampler;

    expect(statuses()).toHaveLength(TOTAL);
    expect(new Set(statuses().map((s) => s.text)).size).toBe(TOTAL);
    const keys = fakes.flatMap((fake) =>
      posted(fake, "/api/v1/statuses").map((r) => r.headers["idempotency-key"]),
    );
    expect(keys).toHaveLength(TOTAL); // no post was sent twice, not even with the same key
    expect(new Set(keys).size).toBe(TOTAL);
    expect(new Set(keys)).toEqual(new Set(ids.map((id) => `${id}.0`)));

    for (let g = 0; g < GROUPS; g++) {
      const page = await apis[g % 2]!(
        "GET",
        `/workspaces/${workspaceId}/posts?group=bulk-${g}&limit=100&include=attempts`,
      );
      expect(page.status).toBe(200);
      expect(page.body.has_more).toBe(false);
      expect(page.body.data).toHaveLength(PER_GROUP);
      for (const post of page.body.data) {
        expect({
          id: post.id,
          state: post.state,
          attempts: post.attempts.map((a: any) => a.status),
          receipts: post.receipts.length,
        }).toEqual({ id: post.id, state: "published", attempts: ["succeeded"], receipts: 1 });
      }
    }
    // Both processes held leases while the backlog drained (sampled from the database).
    expect(owners.size).toBe(2);
  } catch (error) {
    for (const s of servers) console.error(s.log());
    throw error;
  } finally {
    sampling = false; // the sampler stops before its connection closes
    await sampler.catch(() => undefined);
    if (db) await engineOf(db).close();
    for (const s of servers) await s.kill();
    for (const fake of fakes) await fake.stop();
    await data.cleanup();
  }
}, 150_000);
