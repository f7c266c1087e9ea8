// Fault injection on PostgreSQL: three `herald serve` processes share one database under a
// publishing load; one is killed (SIGKILL) and started again, and the database server is restarted
// under the load (pg_ctl restart: a crash when the server is durable, else a fast stop; postgres.ts).
// Exactly-once publishing (counted at the network fakes) and no event lost (the webhook receiver
// gets a post.published event for every published post, copies only under the same event id).
import { expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { POSTGRES_URL } from "../helpers/database.ts";
import { bootstrapCli, tempDataDir, waitFor } from "../posts/engine-helpers.ts";
import { startReceiver } from "../webhooks/helpers.ts";
import { PostLoad } from "./load.ts";
import { connectAll, copies, startNetworks } from "./networks.ts";
import { postgresControl } from "./postgres.ts";
import { allPosts, client, faultSeed, logDir, seeded, serve, type Serve } from "./support.ts";
import { judge, settled } from "./verdict.ts";

const ENV = {
  HERALD_LEASE_SECONDS: "3",
  HERALD_PROVIDER_TIMEOUT_SECONDS: "5",
  HERALD_RATE_LIMIT_PER_MINUTE: "1000000",
  HERALD_DATABASE_POOL: "4",
};

if (POSTGRES_URL === null)
  console.log("[faults] three-processes: skipped on SQLite (runs in the PostgreSQL pass, npm run test:pg)");

test.skipIf(POSTGRES_URL === null)(
  "three processes on PostgreSQL, one killed and restarted, the database restarted: exactly once",
  async () => {
    const started = Date.now();
    const seed = faultSeed("three-processes", 1803);
    const random = seeded(seed);
    const control = await postgresControl(POSTGRES_URL!);
    if (control.reason)
      console.log(`[faults] three-processes: the database is not restarted: ${control.reason}`);
    const data = await tempDataDir();
    const logs = logDir();
    const networks = await startNetworks(seeded(seed + 2).next);
    const receiver = startReceiver();
    const env = { ...data.env, ...networks.env, ...ENV };
    const servers: (Serve | null)[] = [];
    let turn = 0;
    let apiKey = "";
    // Requests go round the processes that are up, as a load balancer's health checks would do.
    const api = () => {
      const up = servers.filter((s): s is Serve => s !== null);
      const target = up[turn++ % up.length]!;
      return client(() => target.url, apiKey);
    };
    try {
      const boot = await bootstrapCli(data);
      apiKey = boot.apiKey;
      servers.push(...(await Promise.all([0, 1, 2].map(() => serve({ env, logs })))));
      const destinations = await connectAll(networks, api(), boot.workspaceId, servers[0]!.url);
      const endpoint = await api()(
        "POST",
        `/workspaces/${boot.workspaceId}/webhook-endpoints`,
        { name: "faults", url: receiver.url, event_types: ["post.published"] },
        { "idempotency-key": "faults-endpoint" },
      );
      expect(endpoint.status).toBe(201);
      networks.answerDelay.min = 10;
      networks.answerDelay.max = 120;
      const load = new PostLoad(api, boot.workspaceId, destinations, seeded(seed + 1), `p${seed}`);

      let running = true;
      const sending = load.run(() => running, 3);
      const steps: string[] = [];
      await Bun.sleep(random.int(800, 1600));
      const victim = random.int(0, 2);
      const port = servers[victim]!.port;
      await servers[victim]!.kill("SIGKILL");
      servers[victim] = null;
      steps.push(`killed process ${victim}`);
      await Bun.sleep(random.int(300, 900));
      if (control.reason === undefined)
        steps.push(`database restarted (${control.mode}) in ${await control.restart()} ms`);
      await Bun.sleep(random.int(300, 900));
      servers[victim] = await serve({ env, logs, port, timeoutMs: 30_000 });
      steps.push(`process ${victim} back`);
      await Bun.sleep(random.int(800, 1600));
      running = false;
      await sending;

      await load.resend();
      expect(load.unanswered).toEqual([]);
      await settled(api(), boot.workspaceId);
      const posts = await allPosts(api(), boot.workspaceId);
      const published = posts.filter((p) => p.state === "published").map((p) => p.id as string);
      // A delivery claimed by the killed process waits out its 30 s claim, then goes again.
      const events = await waitFor(
        "a post.published event for every published post",
        () => {
          const byPost = new Map<string, Set<string>>();
          for (const r of receiver.received) {
            const body = r.body as { id: string; data: { object: { id: string } } };
            const ids = byPost.get(body.data.object.id) ?? new Set<string>();
            byPost.set(body.data.object.id, ids.add(body.id));
          }
          return published.every((id) => byPost.has(id)) ? byPost : undefined;
        },
        60_000,
        250,
      );
      const verdict = judge(posts, load.acked, copies(networks));
      console.log(
        `[faults] three-processes: ${steps.join(", ")}; ${load.acked.size} acknowledged, ` +
          `${posts.length} posts ${JSON.stringify(verdict.states)}; ` +
          `answers ${JSON.stringify(Object.fromEntries(load.statuses))}; ` +
          `${receiver.received.length} deliveries of ${events.size} posts; ` +
          `${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
      expect(verdict.violations).toEqual([]);
      expect(load.unexpected).toEqual([]);
      // While the database restarts a request is a 503 problem, never a bare 500.
      for (const failure of load.unavailable)
        expect(failure).toEqual({
          status: 503,
          code: "public_unavailable",
          contentType: "application/problem+json",
        });
      expect(verdict.states.published ?? 0).toBeGreaterThan(20);
      // Every event once per post: copies carry the same event id.
      expect([...events.entries()].filter(([, ids]) => ids.size !== 1)).toEqual([]);
      expect([...events.keys()].sort()).toEqual([...published].sort());
    } catch (error) {
      for (const s of servers) if (s) console.error(s.log().split("\n").slice(-40).join("\n"));
      throw error;
    } finally {
      for (const s of servers) await s?.kill();
      await receiver.stop();
      await networks.stop();
      await data.cleanup();
      rmSync(logs, { recursive: true, force: true });
    }
  },
  150_000,
);
