// A real crash against a REAL Bluesky PDS: 40 posts due at once to one destination, `herald serve`
// killed with SIGKILL while the PDS is creating their records (some made, their answers still on the
// way), restarted; three cycles. Every post ends published, the PDS holds exactly one record per
// post, and no post asks a person. A proxy holds the PDS's answers back a little, so the kill lands
// after the PDS made records and before Herald heard of them: what the record key (tid.ts) and the
// look-up (reconcile.ts) are for. Skipped with a message when .cache/pds is not installed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import {
  apiClient,
  bootstrapCli,
  startHerald,
  tempDataDir,
  waitFor,
  type HeraldProcess,
  type SharedData,
} from "../posts/engine-helpers.ts";
import { slowProxy } from "../faults/support.ts";
import { PDS_INSTALLED, listPosts, startPds, warnPdsMissing, type RunningPds } from "./pds.ts";

warnPdsMissing("Bluesky crash test on a real PDS");

const POSTS = 40;
const CYCLES = 3;
// A short lease: the restarted server takes the dead one's posts over 3 s after the kill.
const ENV = {
  HERALD_LEASE_SECONDS: "3",
  HERALD_PROVIDER_TIMEOUT_SECONDS: "10",
  HERALD_RATE_LIMIT_PER_MINUTE: "1000000",
};
/** How long the proxy holds each PDS answer back (the PDS has acted by then). */
const ANSWER_DELAY_MS = 250;

let pds: RunningPds | null = null;
let proxy: { origin: string; stop(): Promise<void> } | null = null;
let data: SharedData | null = null;

beforeAll(async () => {
  if (!PDS_INSTALLED) return;
  pds = await startPds("alice");
  proxy = slowProxy(pds.info.pds, () => ANSWER_DELAY_MS);
  data = await tempDataDir();
}, 90_000);

afterAll(async () => {
  await proxy?.stop();
  await pds?.stop();
  await data?.cleanup();
});

test.skipIf(!PDS_INSTALLED)(
  `${POSTS} posts due at once, SIGKILL while the PDS creates their records, restart; ${CYCLES} cycles: one record per post`,
  async () => {
    const alice = pds!.info.accounts[0]!;
    const { workspaceId, apiKey } = await bootstrapCli(data!);
    let server: HeraldProcess = await startHerald(data!, ENV);
    const api = apiClient(() => server.url, apiKey);
    const listing = () => listPosts(pds!.info.pds, alice.did);
    try {
      const connected = await api("POST", `/workspaces/${workspaceId}/destination-connections`, {
        provider: "bluesky",
        instance_origin: proxy!.origin,
        handle: alice.handle,
        app_password: alice.password,
      });
      expect(connected.status).toBe(201);
      const destinationId = connected.body.destination_id;
      let recovered = 0;

      for (let cycle = 1; cycle <= CYCLES; cycle++) {
        const texts = Array.from({ length: POSTS }, (_, i) => `crash cycle ${cycle} post ${i + 1}`);
        const before = (await listing()).length;
        const created = await api(
          "POST",
          `/workspaces/${workspaceId}/posts`,
          {
            when: "now",
            confirmed: true,
            group: `crash-${cycle}`,
            posts: texts.map((text) => ({ destination_id: destinationId, body: [text] })),
          },
          { "idempotency-key": `crash-${cycle}` },
        );
        expect(created.status).toBe(202);
        const ids: string[] = created.body.posts.map((p: any) => p.id);

        // Kill once the PDS holds some of this cycle's records but not all.
        const atKill = await waitFor(
          "the PDS to hold some of the cycle's records",
          async () => {
            const n = (await listing()).length - before;
            return n >= 10 && n < POSTS ? n : n >= POSTS ? -1 : undefined;
          },
          30_000,
          10,
        );
        expect(atKill).toBeGreaterThan(0); // -1: every record was made before the kill could land
        await server.kill("SIGKILL");
        server = await startHerald(data!, ENV);

        const posts = await waitFor(
          `cycle ${cycle}'s posts to settle`,
          async () => {
            const read = await Promise.all(
              ids.map((id) => api("GET", `/workspaces/${workspaceId}/posts/${id}?include=attempts`)),
            );
            const bodies = read.map((r) => r.body);
            return bodies.every((p) => ["published", "needs-attention", "failed"].includes(p.state))
              ? bodies
              : undefined;
          },
          60_000,
          250,
        );
        expect(
          posts.filter((p) => p.state !== "published").map((p) => [p.id, p.state, p.last_error]),
        ).toEqual([]);
        const records = await listing();
        expect(records.length - before).toBe(POSTS);
        const byUri = new Map(records.map((r) => [r.uri, r]));
        for (const text of texts) expect(records.filter((r) => r.value.text === text)).toHaveLength(1);
        for (const post of posts) {
          expect(post.receipts).toHaveLength(1);
          const record = byUri.get(post.receipts[0].provider_object_id);
          expect(record?.value.text).toBe(post.payload.body[0]);
        }
        // Posts whose record the PDS made before the kill, and that Herald found by its key after it.
        const found = posts.filter((p) =>
          p.attempts.some((a: any) => a.trigger === "recovery" && a.status === "succeeded"),
        ).length;
        console.log(`[crash] cycle ${cycle}: killed with ${atKill} records made; ${found} posts recovered`);
        recovered += found;
      }
      expect((await listing()).length).toBe(POSTS * CYCLES);
      expect(recovered).toBeGreaterThan(0);
    } catch (error) {
      console.error(server.log());
      throw error;
    } finally {
      await server.kill();
    }
  },
  120_000,
);
