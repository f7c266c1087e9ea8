// Helpers of the operations tests: the CLI run as a process, and a TestServer-shaped client of a
// `herald serve` child process (so the asset helpers work against it).
import { expect } from "bun:test";
import { uploadAsset } from "../assets/helpers.ts";
import { png } from "../assets/samples.ts";
import { startHerald, type HeraldProcess } from "../posts/engine-helpers.ts";
import type { RequestOptions, TestResponse, TestServer } from "../helpers/server.ts";

/** Runs `herald ARGS` with `env` (no other HERALD_* variable): the CLI tests' runner. */
export { herald } from "../cli/helpers.ts";

/** A client of a server at `url` with `apiKey`, shaped like a TestServer for the request helpers. */
export function remoteServer(url: () => string, apiKey: string): TestServer {
  const request = async (method: string, path: string, o: RequestOptions = {}): Promise<TestResponse> => {
    const headers: Record<string, string> = { ...o.headers };
    const key = o.key === undefined ? apiKey : o.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | undefined;
    if (o.body !== undefined) {
      body = typeof o.body === "string" ? o.body : JSON.stringify(o.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await fetch(url() + path, { method, headers, body });
    const text = await response.text();
    const json = /json/.test(response.headers.get("content-type") ?? "");
    return {
      status: response.status,
      headers: response.headers,
      text,
      body: json ? JSON.parse(text) : undefined,
    };
  };
  return { request } as unknown as TestServer;
}

/** One acknowledged write of a load: what it was and when its answer came (wall clock). */
export interface Ack {
  kind: "post" | "asset" | "deleted";
  id: string;
  at: number;
  bytes?: Buffer;
}

/**
 * The rate limit for a server under `startWriteLoad`: four writers on a fast machine pass the default
 * 1,200 requests a minute, and a 429 is not what a backup test is about.
 */
export const LOAD_ENV = { HERALD_RATE_LIMIT_PER_MINUTE: "1000000" };

/**
 * Four writers against a server until stopped: drafts, and every fifth write an asset upload, every
 * third of which is deleted again. A refused write stops every writer; `stop()` throws it (once,
 * in the test that ran the load, never as an unhandled error in a later one).
 */
export function startWriteLoad(api: TestServer, ws: string): { acks: Ack[]; stop(): Promise<void> } {
  const acks: Ack[] = [];
  let writing = true;
  let n = 0;
  const expectStatus = (what: string, r: TestResponse, status: number) => {
    if (r.status !== status) throw new Error(`${what} answered ${r.status}, not ${status}: ${r.text}`);
  };
  const write = async () => {
    const i = ++n;
    if (i % 5 === 0) {
      const bytes = png(8 + (i % 200), 6 + Math.floor(i / 200));
      const asset = await uploadAsset(api, ws, bytes);
      acks.push({ kind: "asset", id: asset.id, at: Date.now(), bytes });
      if (i % 15 === 0) {
        const r = await api.request("DELETE", `/v1/workspaces/${ws}/assets/${asset.id}`);
        expectStatus(`deleting asset ${asset.id}`, r, 200);
        acks.push({ kind: "deleted", id: asset.id, at: Date.now() });
      }
    } else {
      const r = await api.request("POST", `/v1/workspaces/${ws}/posts`, {
        body: { when: "draft", group: `load-${i}`, posts: [{ channel: "mastodon", body: [`draft ${i}`] }] },
        headers: { "idempotency-key": `load-${i}` },
      });
      expectStatus(`draft ${i}`, r, 201);
      acks.push({ kind: "post", id: r.body.posts[0].id, at: Date.now() });
    }
  };
  const writer = async (): Promise<unknown> => {
    try {
      while (writing) await write();
      return null;
    } catch (error) {
      writing = false;
      return error;
    }
  };
  const writers = Array.from({ length: 4 }, writer);
  return {
    acks,
    async stop() {
      writing = false;
      const failure = (await Promise.all(writers)).find((error) => error !== null);
      if (failure) throw failure;
    },
  };
}

/**
 * Checks a restored server: every post acknowledged before `startedAt` is there, and every asset
 * too, with its bytes, unless it was deleted (before: gone; after: either way).
 */
export async function expectRestored(api: TestServer, ws: string, acks: Ack[], startedAt: number) {
  const before = acks.filter((a) => a.at < startedAt);
  const deletedBefore = new Set(before.filter((a) => a.kind === "deleted").map((a) => a.id));
  // Deleted after the backup started: before or after its snapshot, so present (with bytes) or not.
  const deletedLater = new Set(
    acks.filter((a) => a.kind === "deleted" && !deletedBefore.has(a.id)).map((a) => a.id),
  );
  for (const ack of before) {
    if (ack.kind === "post") {
      const r = await api.request("GET", `/v1/workspaces/${ws}/posts/${ack.id}`);
      expect({ id: ack.id, status: r.status }).toEqual({ id: ack.id, status: 200 });
    } else if (ack.kind === "asset" && !deletedBefore.has(ack.id)) {
      const r = await api.request("GET", `/v1/workspaces/${ws}/assets/${ack.id}?include=download`);
      if (deletedLater.has(ack.id) && r.status === 404) continue;
      expect({ id: ack.id, status: r.status }).toEqual({ id: ack.id, status: 200 });
      const download = await fetch(r.body.download_url);
      expect(Buffer.from(await download.arrayBuffer()).equals(ack.bytes!)).toBe(true);
    }
  }
  return {
    posts: before.filter((a) => a.kind === "post").length,
    assets: before.filter((a) => a.kind === "asset").length,
  };
}

/**
 * Starts `herald serve` on a restored data directory (`env`, under LOAD_ENV's rate limit), adds it to
 * `servers` (stopped by the caller), and checks it as `expectRestored` does.
 */
export async function expectRestoredServer(input: {
  env: Record<string, string> & { HERALD_DATA_DIR: string };
  servers: HeraldProcess[];
  apiKey: string;
  ws: string;
  acks: Ack[];
  startedAt: number;
}) {
  const copy = await startHerald({
    dir: input.env.HERALD_DATA_DIR,
    env: { ...input.env, ...LOAD_ENV },
    cleanup: async () => {},
  });
  input.servers.push(copy);
  return expectRestored(
    remoteServer(() => copy.url, input.apiKey),
    input.ws,
    input.acks,
    input.startedAt,
  );
}
