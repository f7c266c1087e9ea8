// A Herald cluster for the scale-out test and benchmarks: `processes` real `herald serve` children
// on ONE PostgreSQL database (a fresh one per cluster) and ONE S3 stand-in, publishing to a Mastodon
// fake. Also: scheduling a burst of posts due at one moment, waiting until they are published, and
// the throughput that took. Needs HERALD_DATABASE_URL (an admin URL, see test/helpers/database.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { engineOf } from "../../src/db/engine.ts";
import type { Herald } from "../../src/herald.ts";
import { createLogger } from "../../src/lib/logger.ts";
import { bootstrapAccount } from "../../src/modules/account/bootstrap.ts";
import { openHerald } from "../../src/server.ts";
import { startFakeS3, type FakeS3 } from "../assets/fake-s3.ts";
import { startMastodonFake, type MastodonFake } from "../fakes/mastodon.ts";
import { freshDatabase, POSTGRES_URL, type TestDatabase } from "../helpers/database.ts";
import { apiClient, connectMastodonVia, waitFor } from "../posts/engine-helpers.ts";
import { startNode, type HeraldNode } from "./node.ts";

/** JSON API calls against one process (`path` after /v1). */
export type Api = ReturnType<typeof apiClient>;

/** How to build a cluster. */
export interface ClusterOptions {
  /** Number of `herald serve` processes (1 or more). */
  processes: number;
  /** Extra HERALD_* variables of every process (they win over the defaults below). */
  env?: Record<string, string>;
  /** Latency of every request to the Mastodon fakes (0: instant). */
  networkDelayMs?: number;
  /** Mastodon destinations, each its own fake (1: one). A burst spreads its posts over them. */
  destinations?: number;
}

/** A running cluster and what the tests need to drive it. */
export interface Cluster {
  nodes: HeraldNode[];
  /** API clients, one per node (same index). */
  apis: Api[];
  /** The database's variables (HERALD_DATABASE_URL, HERALD_SECRET_KEY). */
  database: TestDatabase;
  s3: FakeS3;
  /** The first destination's fake, and every destination's (same index as `destinationIds`). */
  mastodon: MastodonFake;
  mastodons: MastodonFake[];
  /** A handle on the shared database from this process (no server, no jobs). */
  herald: Herald;
  workspaceId: string;
  apiKey: string;
  destinationId: string;
  destinationIds: string[];
  /** Indexes of the nodes still running. */
  alive(): number[];
  /** An API client of a running node (the first one alive). */
  anyApi(): Api;
  /** Output of one node so far. */
  log(index: number): string;
  /** Stops everything and removes every temp dir and the database; safe to call twice. */
  stop(): Promise<void>;
}

/** Lease length of every node: a killed node's posts are taken over a few seconds after its death. */
export const LEASE_SECONDS = 3;

/** Runs teardown steps last-in first-out; each failure is reported, none stops the others. */
class Teardown {
  private steps: (() => Promise<void> | void)[] = [];
  add(step: () => Promise<void> | void): void {
    this.steps.push(step);
  }
  async run(): Promise<void> {
    for (const step of this.steps.splice(0).reverse()) {
      try {
        await step();
      } catch (error) {
        console.error("cluster teardown step failed:", error);
      }
    }
  }
}

function tempDir(teardown: Teardown, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  teardown.add(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Starts the database, the S3 stand-in, the fake network, the account and `processes` servers. */
export async function startCluster(options: ClusterOptions): Promise<Cluster> {
  if (!POSTGRES_URL) throw new Error("a cluster needs HERALD_DATABASE_URL (a PostgreSQL admin URL)");
  const teardown = new Teardown();
  try {
    return await assemble(options, teardown);
  } catch (error) {
    await teardown.run();
    throw error;
  }
}

async function assemble(options: ClusterOptions, teardown: Teardown): Promise<Cluster> {
  const database = await freshDatabase();
  teardown.add(() => database.drop());
  const s3 = await startFakeS3();
  teardown.add(() => s3.stop());
  const mastodons: MastodonFake[] = [];
  for (let d = 0; d < (options.destinations ?? 1); d++) {
    const fake = await startMastodonFake({ mediaProcessingPolls: 0 });
    teardown.add(() => fake.stop());
    mastodons.push(fake);
  }
  const shared = { ...database.env, ...s3.env };

  // The account and its key are made here, on the same database, before any server runs.
  const herald = await openHerald(
    loadConfig({ ...shared, HERALD_DATA_DIR: tempDir(teardown, "herald-scale-"), HERALD_DATABASE_POOL: "2" }),
    { logger: createLogger({ silent: true }) },
  );
  teardown.add(() => engineOf(herald.db).close());
  const account = await bootstrapAccount(herald, { email: "scale@example.com", workspaceName: "Scale" });

  const env = {
    ...shared,
    HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
    HERALD_LEASE_SECONDS: String(LEASE_SECONDS),
    HERALD_ACCESS_LOG: "0",
    // The tests poll the API hard; the per-key rate limit is not what is measured here.
    HERALD_RATE_LIMIT_PER_MINUTE: "1000000",
    ...options.env,
  };
  // Settled, not Promise.all: a node that comes up after another failed must still be torn down.
  const started = await Promise.allSettled(
    Array.from({ length: options.processes }, async () => {
      const node = await startNode(tempDir(teardown, "herald-node-"), env);
      teardown.add(() => node.kill());
      return node;
    }),
  );
  const failed = started.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
  const nodes = started.map((s) => (s as PromiseFulfilledResult<HeraldNode>).value);
  const apis = nodes.map((node) => apiClient(() => node.url, account.api_key));
  const destinationIds: string[] = [];
  for (const fake of mastodons) {
    destinationIds.push(await connectMastodonVia(apis[0]!, account.workspace_id, fake));
    fake.delayMs = options.networkDelayMs ?? 0;
  }

  const alive = () => nodes.flatMap((node, i) => (node.running() ? [i] : []));
  return {
    nodes,
    apis,
    database,
    s3,
    mastodon: mastodons[0]!,
    mastodons,
    herald,
    workspaceId: account.workspace_id,
    apiKey: account.api_key,
    destinationId: destinationIds[0]!,
    destinationIds,
    alive,
    anyApi: () => {
      const [first] = alive();
      if (first === undefined) throw new Error("no node of the cluster is running");
      return apis[first]!;
    },
    log: (index) => nodes[index]!.log(),
    stop: () => teardown.run(),
  };
}

// ---- a burst of posts due at one moment ----------------------------------------------------------

/** Posts created by `scheduleBurst`. */
export interface Burst {
  /** When every post is due (ms since the epoch). */
  dueAt: number;
  /** Post ids in creation order. */
  ids: string[];
  /** The unique body text of each post, by post id (what the fake network stores). */
  textOf: Map<string, string>;
  /** The group of each create request (at most 100 posts each). */
  groups: string[];
}

let bursts = 0;

/**
 * Creates `total` single-item posts on the cluster's destinations (post i on destination i modulo
 * their number), all due `leadMs` from now, in requests of `perRequest` posts sent at once and spread
 * round-robin over the running nodes.
 */
export async function scheduleBurst(
  c: Cluster,
  total: number,
  options: { leadMs?: number; perRequest?: number } = {},
): Promise<Burst> {
  const perRequest = Math.min(options.perRequest ?? 50, 100);
  const dueAt = Date.now() + (options.leadMs ?? 5_000);
  const tag = `b${++bursts}-${Date.now().toString(36)}`;
  const requests = Math.ceil(total / perRequest);
  const nodes = c.alive();
  const created = await Promise.all(
    Array.from({ length: requests }, async (_, r) => {
      const texts = Array.from(
        { length: Math.min(perRequest, total - r * perRequest) },
        (_, i) => `scale ${tag} post ${r * perRequest + i}`,
      );
      const group = `${tag}-${r}`;
      const api = c.apis[nodes[r % nodes.length]!]!;
      const response = await api(
        "POST",
        `/workspaces/${c.workspaceId}/posts`,
        {
          when: new Date(dueAt).toISOString(),
          confirmed: true,
          group,
          posts: texts.map((text, i) => ({
            destination_id: c.destinationIds[(r * perRequest + i) % c.destinationIds.length],
            body: [text],
          })),
        },
        { "idempotency-key": group },
      );
      if (response.status !== 201)
        throw new Error(`creating ${group} answered ${response.status}: ${JSON.stringify(response.body)}`);
      // The created posts come back in the order they were sent.
      const ids: string[] = response.body.posts.map((p: { id: string }) => p.id);
      return { group, ids, texts };
    }),
  );
  if (Date.now() > dueAt) throw new Error("the burst was created after its due time: give it more lead time");
  const textOf = new Map<string, string>();
  for (const { ids, texts } of created) ids.forEach((id, i) => textOf.set(id, texts[i]!));
  return { dueAt, ids: created.flatMap((r) => r.ids), textOf, groups: created.map((r) => r.group) };
}

/** A post as the listing shows it (with its attempts). */
export interface ListedPost {
  id: string;
  state: string;
  published_at: string | null;
  attempts: { status: string; error: { code: string } | null }[];
  receipts: unknown[];
}

/** Every post of a burst as a running node lists it now. */
export async function listBurst(c: Cluster, burst: Burst): Promise<ListedPost[]> {
  const pages = await Promise.all(
    burst.groups.map(async (group) => {
      const r = await c.anyApi()(
        "GET",
        `/workspaces/${c.workspaceId}/posts?group=${group}&limit=100&include=attempts`,
      );
      if (r.status !== 200)
        throw new Error(`listing ${group} answered ${r.status}: ${JSON.stringify(r.body)}`);
      return r.body.data as ListedPost[];
    }),
  );
  return pages.flat();
}

const GIVEN_UP = new Set(["failed", "needs-attention", "missed", "canceled"]);

/**
 * Waits until every post of the burst is `published` (asked of running nodes every 250 ms); fails at
 * once if one ends in a state it will not leave by itself. Returns the final listing.
 */
export async function waitPublished(c: Cluster, burst: Burst, timeoutMs = 90_000): Promise<ListedPost[]> {
  return waitFor(
    `${burst.ids.length} posts published`,
    async () => {
      const posts = await listBurst(c, burst);
      const stuck = posts.find((p) => GIVEN_UP.has(p.state));
      if (stuck) throw new Error(`post ${stuck.id} ended ${stuck.state}: ${JSON.stringify(stuck)}`);
      const done = posts.filter((p) => p.state === "published").length;
      return done === burst.ids.length ? posts : undefined;
    },
    timeoutMs,
    250,
  );
}

/**
 * `waitPublished` for a large burst: the shared database is counted instead (listing thousands of
 * posts through the API every poll would cost the processes measured more than their work), and
 * the burst is listed once at the end.
 */
async function waitAllPublished(c: Cluster, burst: Burst, timeoutMs: number): Promise<ListedPost[]> {
  const marks = burst.groups.map(() => "?").join(",");
  await waitFor(
    `${burst.ids.length} posts published`,
    async () => {
      const rows = await engineOf(c.herald.db).query<{ state: string; n: number }>(
        `SELECT state, count(*) AS n FROM posts WHERE group_key IN (${marks}) GROUP BY state`,
        burst.groups,
      );
      const stuck = rows.find((r) => GIVEN_UP.has(r.state));
      if (stuck) throw new Error(`${stuck.n} posts of the burst ended ${stuck.state}`);
      const done = Number(rows.find((r) => r.state === "published")?.n ?? 0);
      return done === burst.ids.length || undefined;
    },
    timeoutMs,
    250,
  );
  return listBurst(c, burst);
}

/** Posts published per second, from the burst's due time to its last publication. */
export function throughput(burst: Burst, posts: ListedPost[]): { seconds: number; perSecond: number } {
  const last = Math.max(...posts.map((p) => Date.parse(p.published_at!)));
  const seconds = (last - burst.dueAt) / 1000;
  return { seconds, perSecond: posts.length / seconds };
}

/**
 * One throughput run for benchmarks: a fresh cluster of `processes` nodes publishes `posts` posts
 * due at once, then is torn down.
 */
export async function measureThroughput(
  processes: number,
  posts: number,
  options: Omit<ClusterOptions, "processes"> = {},
): Promise<{
  processes: number;
  posts: number;
  seconds: number;
  perSecond: number;
  crashes: number;
  maxPerDestination: number;
  inOrder: boolean;
}> {
  const c = await startCluster({ ...options, processes });
  try {
    // Creating is not what is measured: the network answers at once until the posts are in.
    for (const fake of c.mastodons) fake.delayMs = 0;
    const burst = await scheduleBurst(c, posts, { perRequest: 100, leadMs: 3_000 + posts * 5 });
    for (const fake of c.mastodons) {
      fake.delayMs = options.networkDelayMs ?? 0;
      fake.maxInFlight = 0;
    }
    const listed = await waitAllPublished(c, burst, 600_000);
    // A crashed publication is only taken over when its lease ends: it shows in the time.
    const crashes = c.nodes.map((_, i) => c.log(i).match(/crashed/g)?.length ?? 0).reduce((a, b) => a + b, 0);
    // Every destination's network got its posts one at a time, in due order (all due at once: by id).
    const idOf = new Map([...burst.textOf].map(([id, text]) => [text, id]));
    const inOrder = c.mastodons.every((fake) => {
      const ids = fake.statuses.map((status) => idOf.get(status.text)!);
      return ids.every((id, i) => i === 0 || ids[i - 1]! < id);
    });
    const maxPerDestination = Math.max(...c.mastodons.map((fake) => fake.maxInFlight));
    return { processes, posts, ...throughput(burst, listed), crashes, maxPerDestination, inOrder };
  } finally {
    await c.stop();
  }
}

/** Creates a webhook endpoint of the cluster's workspace through node `via`; returns it (with its secret). */
export async function subscribe(c: Cluster, url: string, eventTypes: string[], via = 0): Promise<any> {
  const r = await c.apis[via]!(
    "POST",
    `/workspaces/${c.workspaceId}/webhook-endpoints`,
    { name: "Scale receiver", url, event_types: eventTypes },
    { "idempotency-key": `scale-endpoint-${Date.now()}` },
  );
  if (r.status !== 201)
    throw new Error(`creating the endpoint answered ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}
