// Interop: the Bluesky adapter against a REAL PDS (@atproto/pds on Node 22, see setup-pds.sh).
// Skipped with a message when .cache/pds is not installed; CI runs `bash test/interop/setup-pds.sh` first.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { systemClock } from "../../src/lib/clock.ts";
import { newId } from "../../src/db/ids.ts";
import { createBlueskyAdapter } from "../../src/providers/bluesky/adapter.ts";
import { itemRecordKey } from "../../src/providers/bluesky/tid.ts";
import type { DestinationRef, PublishedItem } from "../../src/providers/types.ts";
import { expectProviderError, makePng, mediaItem } from "../providers/support.ts";
import { PDS_INSTALLED, listPosts, startPds, warnPdsMissing, type PdsInfo, type RunningPds } from "./pds.ts";

const installed = PDS_INSTALLED;
warnPdsMissing("Bluesky PDS interop test");

let running: RunningPds | null = null;
let info: PdsInfo;

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
    running = await startPds();
    info = running.info;
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
    await running?.stop();
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

  test("the record key Herald derives is accepted; a repeat is outcome_unknown; reconcileItem reads the key", async () => {
    const postId = newId("send");
    const item = {
      destination,
      text: "keyed",
      headline: "keyed",
      itemIndex: 0,
      media: [],
      options: {},
      root: null,
      parent: null,
      idempotencyKey: `${postId}.0`,
    };
    const since = Date.now();
    const rkey = itemRecordKey(item);
    // Not made yet: the PDS answers 400 RecordNotFound, which proves it absent.
    expect(await adapter.reconcileItem!({ item, since })).toEqual({
      state: "absent",
      reason: `the PDS has no record at://${destination.externalId}/app.bsky.feed.post/${rkey}`,
    });
    const published = await adapter.publishItem(item);
    expect(published.providerObjectId).toBe(`at://${destination.externalId}/app.bsky.feed.post/${rkey}`);
    // The same key again: the PDS refuses with a bare 500, which may not be read as "not made".
    const again = await expectProviderError(adapter.publishItem(item), "outcome_unknown");
    expect(again.statusCode).toBe(500);
    const found = await adapter.reconcileItem!({ item, since });
    expect(found.state).toBe("published");
    const receipt = (found as { item: PublishedItem }).item;
    expect([receipt.providerObjectId, receipt.url, receipt.extra]).toEqual([
      published.providerObjectId,
      published.url,
      published.extra,
    ]);
    const uris = (await listPosts(info.pds, destination.externalId)).map((r) => r.uri);
    expect(uris.filter((uri) => uri === published.providerObjectId)).toHaveLength(1);
  }, 30_000);

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
