// Fault injection: SIGKILL `herald serve` at seeded random moments of a publishing load, 20 times,
// restarting it on the same data directory each time; then one run without kills until everything
// settles. Every acknowledged post exists, no network holds a post twice, every post is published or
// says what the user must do, and no request was half done (a resent key is answered 2xx).
// HERALD_FAULTS_SEED replays a run; HERALD_FAULTS_FULL=1 makes it 100 cycles.
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { POSTGRES_URL } from "../helpers/database.ts";
import { bootstrapCli, tempDataDir } from "../posts/engine-helpers.ts";
import { PostLoad } from "./load.ts";
import { connectAll, copies, startNetworks } from "./networks.ts";
import { FULL, allPosts, client, faultSeed, logDir, seeded, serve, type Serve } from "./support.ts";
import { judge, settled } from "./verdict.ts";

const CYCLES = FULL ? 100 : 20;
// Short leases and timeouts keep the script small: a dead process's posts are examined 3 s later.
const ENGINE_ENV = {
  HERALD_LEASE_SECONDS: "3",
  HERALD_PROVIDER_TIMEOUT_SECONDS: "5",
  HERALD_RATE_LIMIT_PER_MINUTE: "1000000",
};

// One engine is enough here: the PostgreSQL pass proves the same in three-processes.test.ts.
if (POSTGRES_URL !== null)
  console.log("[faults] kill-cycles: skipped on PostgreSQL (three-processes.test.ts kills processes there)");
test.skipIf(POSTGRES_URL !== null)(
  `SIGKILL at random moments of a publishing load, ${CYCLES} cycles: nothing lost, nothing twice`,
  async () => {
    const started = Date.now();
    const seed = faultSeed("kill-cycles", 1818);
    // Separate streams: the kill moments repeat exactly; the load's draws depend on timing.
    const random = seeded(seed);
    const loadRandom = seeded(seed + 1);
    const data = await tempDataDir();
    const logs = logDir();
    const networks = await startNetworks(seeded(seed + 2).next);
    const env = { ...data.env, ...networks.env, ...ENGINE_ENV };
    let current: Serve | null = null;
    const api = () => client(() => current!.url, apiKey);
    let apiKey = "";
    const killedAt: number[] = [];
    try {
      const boot = await bootstrapCli(data);
      apiKey = boot.apiKey;
      current = await serve({ env, logs });
      const port = current.port;
      const destinations = await connectAll(networks, api(), boot.workspaceId, current.url);
      networks.answerDelay.min = 10;
      networks.answerDelay.max = 120;
      const load = new PostLoad(api, boot.workspaceId, destinations, loadRandom, `k${seed}`);

      for (let cycle = 0; cycle < CYCLES; cycle++) {
        if (cycle > 0) current = await serve({ env, logs, port });
        // A careful client sends what got no answer again, with the same key, before new work.
        await load.resend();
        let running = true;
        const sending = load.run(() => running);
        const after = random.int(150, 900);
        await Bun.sleep(after);
        await current.kill("SIGKILL");
        killedAt.push(after);
        running = false;
        await sending;
      }

      // The last run: no kills until every post has settled.
      current = await serve({ env, logs, port });
      await load.resend();
      expect(load.unanswered).toEqual([]);
      const killsDone = Date.now();
      await settled(api(), boot.workspaceId);
      const settleMs = Date.now() - killsDone;
      const posts = await allPosts(api(), boot.workspaceId);
      const verdict = judge(posts, load.acked, copies(networks));
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const mastodonCreates = networks.mastodon.requests.filter(
        (r) => r.method === "POST" && r.path === "/api/v1/statuses",
      ).length;
      console.log(
        `[faults] kill-cycles: ${CYCLES} kills at ${killedAt.join(",")} ms; ` +
          `${load.acked.size} acknowledged, ` +
          `${posts.length} posts ${JSON.stringify(verdict.states)}; answers ` +
          `${JSON.stringify(Object.fromEntries(load.statuses))}; ${mastodonCreates} Mastodon creates for ` +
          `${networks.mastodon.statuses.length} statuses; settled in ${settleMs} ms; ${seconds} s`,
      );
      expect(load.unexpected).toEqual([]);
      expect(load.unavailable).toEqual([]);
      expect(verdict.violations).toEqual([]);
      // The load did reach the networks, in every cycle.
      expect(verdict.states.published ?? 0).toBeGreaterThan(CYCLES);
      // Idempotent retries of Mastodon reuse one key per post: no key made two statuses.
      const keys = networks.mastodon.statuses.map((s) => s.idempotencyKey);
      expect(new Set(keys).size).toBe(keys.length);
    } catch (error) {
      console.error(`[faults] kill-cycles failed with seed ${seed}; last log:\n${current?.log()}`);
      throw error;
    } finally {
      await current?.kill();
      await networks.stop();
      await data.cleanup();
      rmSync(logs, { recursive: true, force: true });
    }
  },
  (FULL ? 900 : 150) * 1000,
);
