// `herald export` / `herald import` (issue 10), run as the real CLI in subprocesses (each process
// binds one SQL dialect). An installation populated through the API (account, Mastodon destination,
// webhook endpoint with deliveries, invitation, asset with local bytes, a draft, a published thread
// and a scheduled post) goes SQLite → PostgreSQL → SQLite when HERALD_DATABASE_URL is set, else
// SQLite → SQLite, and must come back row for row; a server on the imported installation serves the
// same post and asset bytes; a non-empty target, a truncated file and another secret key are refused.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../src/config.ts";
import { engineOf } from "../src/db/engine.ts";
import { createMemoryLogger } from "../src/lib/logger.ts";
import { exportInstallation } from "../src/modules/transfer/export.ts";
import { openHerald } from "../src/server.ts";
import { startFakeS3 } from "./assets/fake-s3.ts";
import { uploadAsset } from "./assets/helpers.ts";
import { png } from "./assets/samples.ts";
import { startMastodonFake } from "./fakes/mastodon.ts";
import { freshDatabase, POSTGRES_URL, TEST_SECRET_KEY, type TestDatabase } from "./helpers/database.ts";
import { spawnHerald } from "./helpers/process.ts";
import { herald } from "./cli/helpers.ts";
import { startTestServer, type TestAccount } from "./helpers/server.ts";
import { connectMastodon, idem } from "./posts/helpers.ts";
import { mustCreateEndpoint, runWebhooks, startReceiver } from "./webhooks/helpers.ts";

/** Runs the CLI and expects success. */
async function mustRun(args: string[], env: Record<string, string>): Promise<string> {
  const run = await herald(args, env);
  expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: "" });
  return run.stdout;
}

/** Runs the CLI and expects one line on stderr and exit code `code`. */
async function mustFail(args: string[], env: Record<string, string>, code: number, pattern: RegExp) {
  const run = await herald(args, env);
  expect({ code: run.code, stdout: run.stdout }).toEqual({ code, stdout: "" });
  expect(run.stderr).toMatch(pattern);
  expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
}

const work = mkdtempSync(join(tmpdir(), "herald-transfer-"));
const dir = (name: string) => join(work, name);
const file = (name: string) => join(work, `${name}.jsonl`);
const sqlite = (name: string) => ({ HERALD_DATA_DIR: dir(name), HERALD_SECRET_KEY: TEST_SECRET_KEY });
const source = sqlite("source");
const picture = png(8, 6);
/** Bytes over several chunk lines (1 MiB each), and over two parts of a multipart upload to S3. */
const large = png(64, 48, 6 * 1024 * 1024 + 12_345);

/** The lines of an export, with the header's source dialect blanked (the one field that may differ). */
function linesOf(path: string): string[] {
  const lines = readFileSync(path, "utf8").split("\n");
  lines[0] = JSON.stringify({ ...JSON.parse(lines[0]!), dialect: "-" });
  return lines;
}

/** The API's view of the source, taken before it stopped. */
const seen: { owner?: TestAccount; draft?: any; thread?: any; asset?: any; endpoint?: any } = {};
/** The installation between the two imports: PostgreSQL when the suite runs on it. */
let middle: Record<string, string> = sqlite("middle");
let pg: TestDatabase | null = null;

beforeAll(async () => {
  const mastodon = await startMastodonFake({ mediaProcessingPolls: 0 });
  const receiver = startReceiver();
  // The source is SQLite on both passes (an empty HERALD_DATABASE_URL wins over the suite's).
  const s = await startTestServer({
    env: { ...source, HERALD_DATABASE_URL: "", HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" },
  });
  try {
    const ws = s.owner.workspaceId;
    const destination = await connectMastodon(s, mastodon);
    const endpoint = await mustCreateEndpoint(s, { url: receiver.url });
    const invited = await s.request("POST", "/v1/account/invitations", {
      body: { email: "friend@example.com" },
      headers: idem(),
    });
    expect(invited.status).toBe(201);
    const asset = await uploadAsset(s, ws, picture);
    await uploadAsset(s, ws, large, { fileName: "large.png" });
    const create = async (body: Record<string, unknown>, status: number) => {
      const r = await s.request("POST", `/v1/workspaces/${ws}/posts`, { body, headers: idem() });
      expect({ status: r.status, text: r.text.slice(0, 500) }).toMatchObject({ status });
      return r.body.posts[0].id as string;
    };
    const draft = await create(
      { when: "draft", group: "tr-draft", posts: [{ channel: "mastodon", body: ["A draft"] }] },
      201,
    );
    const thread = await create(
      {
        when: "now",
        confirmed: true,
        group: "tr-thread",
        posts: [{ destination_id: destination, body: ["One", "Two"], media: [asset.id] }],
      },
      202,
    );
    await create(
      {
        when: "2026-04-01T10:00:00Z",
        confirmed: true,
        group: "tr-later",
        posts: [{ destination_id: destination, body: ["Later"] }],
      },
      201,
    );
    await s.server.engine.runUntilIdle();
    await runWebhooks(s.server);
    const get = async (path: string) => {
      const r = await s.request("GET", `/v1/workspaces/${ws}${path}`);
      expect(r.status).toBe(200);
      return r.body;
    };
    seen.owner = s.owner;
    seen.draft = await get(`/posts/${draft}`);
    seen.thread = await get(`/posts/${thread}`);
    expect(seen.thread.state).toBe("published");
    seen.asset = await get(`/assets/${asset.id}`);
    seen.endpoint = await get(`/webhook-endpoints/${endpoint.id}`);
  } finally {
    await s.stop();
    await receiver.stop();
    await mastodon.stop();
  }
  if (POSTGRES_URL) {
    pg = await freshDatabase();
    middle = { HERALD_DATA_DIR: dir("middle"), ...pg.env };
  }
});

afterAll(async () => {
  await pg?.drop();
  rmSync(work, { recursive: true, force: true });
});

const path = POSTGRES_URL ? "SQLite → PostgreSQL → SQLite" : "SQLite → SQLite";
describe(`export and import (${path})`, () => {
  test("an export imported and exported again is the same, row for row and byte for byte", async () => {
    const exported = await mustRun(["export", "--out", file("first")], source);
    expect(exported).toContain("The secret key is not in the file");
    const first = linesOf(file("first"));
    const counts = JSON.parse(first.at(-2)!).end;
    for (const table of [
      "accounts",
      "api_keys",
      "assets",
      "asset_uploads",
      "attempts",
      "audit_records",
      "destinations",
      "events_outbox",
      "idempotency_keys",
      "invitations",
      "mail_outbox",
      "posts",
      "receipts",
      "webhook_deliveries",
      "webhook_delivery_attempts",
      "webhook_endpoints",
    ])
      expect({ table, rows: counts.rows[table] > 0 }).toEqual({ table, rows: true });
    expect(counts.rows.posts).toBe(3);
    const bytes = picture.length + large.length;
    expect({ blobs: counts.blobs, bytes: counts.blob_bytes }).toEqual({ blobs: 2, bytes });
    expect(first.filter((line) => line.startsWith('{"b":'))).toHaveLength(1 + 7);

    const imported = JSON.parse(await mustRun(["import", file("first"), "--json"], middle));
    expect(imported).toMatchObject({ rows: counts.rows, blobs: 2, blob_bytes: bytes, missing_blobs: [] });
    await mustRun(["export", "--out", file("middle")], middle);
    let last = file("middle");
    if (POSTGRES_URL) {
      expect(JSON.parse(readFileSync(last, "utf8").split("\n")[0]!).dialect).toBe("postgresql");
      await mustRun(["import", file("middle")], sqlite("last"));
      await mustRun(["export", "--out", file("last")], sqlite("last"));
      last = file("last");
    }
    expect(linesOf(last)).toEqual(first);
  });

  test("a server on the imported installation serves the same posts, asset and bytes", async () => {
    const server = await spawnHerald({
      baseUrl: true,
      env: { ...middle, HERALD_HOST: "127.0.0.1", HERALD_ACCESS_LOG: "0" },
    });
    const base = server.url;
    try {
      await server.waitForHealth({ timeoutMs: 15_000, pollMs: 100 });
      const get = async (path: string) => {
        const r = await fetch(`${base}/v1/workspaces/${seen.owner!.workspaceId}${path}`, {
          headers: { authorization: `Bearer ${seen.owner!.apiKey}` },
        });
        expect(r.status).toBe(200);
        return r.json() as Promise<any>;
      };
      expect(await get(`/posts/${seen.draft.id}`)).toEqual(seen.draft);
      expect(await get(`/posts/${seen.thread.id}`)).toEqual(seen.thread);
      expect(await get(`/assets/${seen.asset.id}`)).toEqual(seen.asset);
      expect(await get(`/webhook-endpoints/${seen.endpoint.id}`)).toEqual(seen.endpoint);
      const link = (await get(`/assets/${seen.asset.id}?include=download`)).download_url;
      const download = await fetch(link);
      expect(download.status).toBe(200);
      expect(Buffer.from(await download.arrayBuffer()).equals(picture)).toBe(true);
      // The identity sequence moved past the imported invitations (PostgreSQL needs telling).
      const invited = await fetch(`${base}/v1/account/invitations`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${seen.owner!.apiKey}`,
          "content-type": "application/json",
          ...idem(),
        },
        body: JSON.stringify({ email: "second@example.com" }),
      });
      expect(invited.status).toBe(201);
    } finally {
      await server.stop();
    }
  });

  test("S3 storage: import puts the blobs in the bucket; an S3 export leaves them there", async () => {
    const s3 = await startFakeS3();
    try {
      const bucket = { ...sqlite("s3"), ...s3.env };
      const imported = JSON.parse(await mustRun(["import", file("first"), "--json"], bucket));
      expect(imported).toMatchObject({ blobs: 2, missing_blobs: [] });
      const exported = await mustRun(["export", "--out", file("s3")], bucket);
      expect(exported).toContain("Blobs are not in the file (HERALD_STORAGE=s3)");
      const lines = readFileSync(file("s3"), "utf8").split("\n");
      expect(JSON.parse(lines[0]!)).toMatchObject({ storage: "s3", blobs: false });
      expect(lines.filter((line) => line.startsWith('{"b":'))).toEqual([]);
      // Another installation on the same bucket finds the bytes; local storage does not have them.
      await mustRun(["import", file("s3")], { ...sqlite("s3-again"), ...s3.env });
      await mustFail(["import", file("s3")], sqlite("s3-local"), 1, /2 ready asset\(s\) have no bytes/);
    } finally {
      await s3.stop();
    }
    // Four CLI processes and an S3 stand-in: more than the default 5 s on a busy 2-core machine.
  }, 30_000);

  test("import refuses a target that holds data", async () => {
    await mustFail(["import", file("first")], middle, 1, /^herald: the target installation is not empty/);
  });

  test("a truncated or damaged file is refused before anything is written", async () => {
    const text = readFileSync(file("first"), "utf8");
    const lines = text.split("\n");
    writeFileSync(file("no-trailer"), lines.slice(0, -2).join("\n") + "\n");
    writeFileSync(file("cut"), text.slice(0, Math.floor(text.length * 0.6)));
    lines[3] = lines[3]!.replace(/"r":\{/, '"r":{"extra":1,');
    writeFileSync(file("damaged"), lines.join("\n"));
    const target = sqlite("refusing");
    await mustFail(["import", file("no-trailer")], target, 1, /is truncated/);
    await mustFail(["import", file("cut")], target, 1, /is (damaged or )?truncated/);
    await mustFail(["import", file("damaged")], target, 1, /is damaged: line 4/);
    // Nothing was written: the whole file still goes in.
    await mustRun(["import", file("first")], target);
  });

  test("import refuses a target with another secret key, or none", async () => {
    const other = {
      ...sqlite("other-key"),
      HERALD_SECRET_KEY: "another-secret-key-0123456789abcdefghijklmnop",
    };
    await mustFail(["import", file("first")], other, 1, /secret key is not the one the export was made with/);
    await mustFail(["import", file("first")], { HERALD_DATA_DIR: dir("no-key") }, 1, /no secret key/);
  });

  test("usage mistakes exit 2 with one line", async () => {
    await mustFail(["export"], source, 2, /--out FILE is required/);
    await mustFail(["export", "--out", file("first")], source, 2, /exists/);
    await mustFail(["import"], source, 2, /exactly one FILE/);
    expect((await herald(["export", "--help"], {})).stdout).toContain("The secret key is NOT in the file");
  });

  // In-process (after every server of this file has stopped): one row per page must give the same
  // file as the CLI's export, which exercises paging over single and composite primary keys.
  test("paging row by row reads the same rows", async () => {
    const installations = POSTGRES_URL ? [source, middle] : [source];
    for (const [i, env] of installations.entries()) {
      await mustRun(["export", "--out", file(`whole-${i}`)], env);
      const h = await openHerald(loadConfig(env), { logger: createMemoryLogger(), mail: null });
      try {
        await exportInstallation(h, file(`paged-${i}`), { pageRows: 1 });
      } finally {
        await engineOf(h.db).close();
      }
      expect(readFileSync(file(`paged-${i}`), "utf8")).toBe(readFileSync(file(`whole-${i}`), "utf8"));
    }
  });
});
