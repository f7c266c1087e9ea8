// Shared pieces of the fault-injection scripts: a seeded random source (a failure names its seed),
// `herald serve` children on a fixed port with their log outside the data directory (a full or
// read-only disk must not take the log with it), and a proxy that holds network answers back, so a
// kill lands after a network stored a post and before Herald heard of it.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiClient, type HeraldProcess, serveOnLogs } from "../posts/engine-helpers.ts";

/** The seed of this run: HERALD_FAULTS_SEED, else `fallback` (CI's fixed seed); printed for replays. */
export function faultSeed(name: string, fallback: number): number {
  const raw = process.env.HERALD_FAULTS_SEED;
  const seed = raw && /^\d+$/.test(raw) ? Number(raw) : fallback;
  console.log(`[faults] ${name}: seed ${seed} (replay with HERALD_FAULTS_SEED=${seed})`);
  return seed;
}

/** Whether the long variants run (HERALD_FAULTS_FULL=1). */
export const FULL = process.env.HERALD_FAULTS_FULL === "1";

/** mulberry32: a small seeded generator; the same seed gives the same run of numbers. */
export function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    /** An integer from `min` to `max`, both included. */
    int: (min: number, max: number) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
  };
}

/** A `herald serve` child process of a fault script. */
export type Serve = HeraldProcess;

/** A directory for the children's logs (never the data directory). */
export function logDir(): string {
  return mkdtempSync(join(tmpdir(), "herald-faults-log-"));
}

/**
 * Starts `bun src/main.ts serve` with `env` on `port` (a free one if omitted) and waits until
 * /health answers; the same port after a SIGKILL keeps the base URL, as a restarted service would.
 */
export function serve(input: {
  env: Record<string, string>;
  logs: string;
  port?: number;
  /** How long to wait for /health (PostgreSQL restarts take longer). */
  timeoutMs?: number;
}): Promise<Serve> {
  // Any answer below 500 counts as up: a fault script may start a server whose /health reports trouble.
  return serveOnLogs({ ...input, pollMs: 25, ready: (status) => status < 500 });
}

/**
 * A proxy in front of a network fake that answers `afterMs` late: the network has acted on the
 * request while Herald still waits, the moment where a crash leaves the outcome unknown.
 */
export function slowProxy(target: string, afterMs: () => number): { origin: string; stop(): Promise<void> } {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const headers = new Headers(request.headers);
      headers.delete("host");
      headers.delete("content-length");
      const body =
        request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
      const answer = await fetch(`${target}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body,
        redirect: "manual",
      });
      const bytes = await answer.arrayBuffer();
      await Bun.sleep(afterMs());
      const out = new Headers(answer.headers);
      out.delete("content-encoding");
      out.delete("content-length");
      return new Response(bytes, { status: answer.status, headers: out });
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/** JSON calls to a child with a key; a refused connection (the child is dead) is status 0. */
export function client(base: () => string, apiKey: string) {
  return apiClient(base, apiKey, { deadIsStatus0: true });
}

export type Client = ReturnType<typeof client>;

/** Every post of a workspace, through the API's pages (oldest pages first is not needed). */
export async function allPosts(api: Client, workspaceId: string): Promise<any[]> {
  const posts: any[] = [];
  let cursor: string | null = null;
  do {
    const query = `limit=100&include=attempts${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`;
    const page = await api("GET", `/workspaces/${workspaceId}/posts?${query}`);
    if (page.status !== 200)
      throw new Error(`listing posts answered ${page.status}: ${JSON.stringify(page.body)}`);
    posts.push(...page.body.data);
    cursor = page.body.has_more ? page.body.next_cursor : null;
  } while (cursor);
  return posts;
}
