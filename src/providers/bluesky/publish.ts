// Publishing one Bluesky item: images or a video uploaded as blobs, mentions and links as facets
// (facets.ts), then com.atproto.repo.createRecord under the record key Herald chose for the item
// (tid.ts), with the thread's root and parent for a reply.
import { expectJson, providerFetch, readJson, responseDetails } from "../http.ts";
import { stringList } from "../text.ts";
import {
  ProviderError,
  type DestinationRef,
  type MediaItem,
  type ProviderDeps,
  type PublishedItem,
  type PublishItemInput,
} from "../types.ts";
import type { BlueskyCredentials } from "./adapter.ts";
import { buildFacets } from "./facets.ts";
import { itemRecordKey } from "./tid.ts";
import { base, bearer, blueskyRetryAt, xrpcCaller, xrpcError } from "./xrpc.ts";

/** The publishing half of the Bluesky adapter (items are published at once). */
export function createBlueskyPublisher(deps: ProviderDeps): {
  publishItem(input: PublishItemInput): Promise<PublishedItem>;
} {
  const xrpc = xrpcCaller(deps);

  return {
    async publishItem(input: PublishItemInput): Promise<PublishedItem> {
      const { destination } = input;
      const credentials = destination.credentials as Partial<BlueskyCredentials>;
      const did = credentials.did ?? destination.externalId;
      const embed = await buildEmbed(xrpc, input);
      const facets = await buildFacets({
        text: input.text,
        resolveHandle: (handle) => resolveHandle(deps, { origin: destination.origin, handle }),
      });
      const langs = stringList(input.options.languages);
      const labels = stringList(input.options.content_labels);
      const root = input.root ?? input.parent;
      const record = {
        $type: "app.bsky.feed.post",
        text: input.text,
        createdAt: new Date(deps.clock.now()).toISOString(),
        ...(facets.length > 0 ? { facets } : {}),
        ...(langs.length > 0 ? { langs } : {}),
        ...(labels.length > 0
          ? { labels: { $type: "com.atproto.label.defs#selfLabels", values: labels.map((val) => ({ val })) } }
          : {}),
        ...(input.parent && root
          ? { reply: { root: strongRef(root), parent: strongRef(input.parent) } }
          : {}),
        ...(embed ? { embed } : {}),
      };
      const operation = "com.atproto.repo.createRecord";
      const response = await providerFetch({
        deps,
        operation,
        url: `${base(destination.origin)}/xrpc/${operation}`,
        init: {
          method: "POST",
          headers: { ...bearer(destination), "content-type": "application/json" },
          body: JSON.stringify({
            repo: did,
            collection: "app.bsky.feed.post",
            rkey: itemRecordKey(input),
            record,
          }),
        },
        // Not a retry-safe call: an unanswered create may have made the record, and a second create
        // under the same key is an error (a 500 on the reference PDS, itself `outcome_unknown`). Either
        // way the engine reads the key back (reconcile.ts) before anything is sent again.
        idempotent: false,
        retryAt: blueskyRetryAt,
      });
      if (!response.ok) throw await xrpcError({ operation, response });
      const created = await expectJson({ operation, response });
      return blueskyReceipt({ destination, uri: String(created.uri), cid: created.cid, operation, response });
    },
  };
}

/** An item's receipt from its record's uri and cid: the post's bsky.app link, and the strong ref replies need. */
export function blueskyReceipt(input: {
  destination: DestinationRef;
  uri: string;
  cid: unknown;
  operation: string;
  response: Response;
}): PublishedItem {
  const { destination, uri, operation, response } = input;
  const credentials = destination.credentials as Partial<BlueskyCredentials>;
  const did = credentials.did ?? destination.externalId;
  const rkey = uri.split("/").pop() ?? "";
  return {
    providerObjectId: uri,
    url: `https://bsky.app/profile/${destination.handle || credentials.handle || did}/post/${rkey}`,
    extra: { uri, cid: input.cid },
    provider: {
      operation,
      requestId: responseDetails({ operation, response }).requestId,
      statusCode: response.status,
    },
  };
}

/** Uploads one media item's bytes as a blob on the PDS; the blob reference. */
async function uploadBlob(
  xrpc: ReturnType<typeof xrpcCaller>,
  input: {
    destination: DestinationRef;
    media: MediaItem;
  },
): Promise<Record<string, unknown>> {
  const body = await xrpc({
    origin: input.destination.origin,
    nsid: "com.atproto.repo.uploadBlob",
    init: {
      method: "POST",
      headers: { ...bearer(input.destination), "content-type": input.media.contentType },
      body: await input.media.read(),
    },
    idempotent: true, // an unreferenced blob is garbage-collected
  });
  return body.blob;
}

/** The DID of a mentioned handle, or null when the PDS does not know it. */
async function resolveHandle(
  deps: ProviderDeps,
  input: { origin: string; handle: string },
): Promise<string | null> {
  const operation = "com.atproto.identity.resolveHandle";
  const url = `${base(input.origin)}/xrpc/${operation}?${new URLSearchParams({ handle: input.handle })}`;
  const response = await providerFetch({ deps, operation, url, idempotent: true, retryAt: blueskyRetryAt });
  if (!response.ok) return null; // unknown handle: the mention stays plain text
  const did = (await readJson(response))?.did;
  return typeof did === "string" && did.startsWith("did:") ? did : null;
}

/** The post's embed: its video, or its images with alt text; none without media. */
async function buildEmbed(
  xrpc: ReturnType<typeof xrpcCaller>,
  input: PublishItemInput,
): Promise<Record<string, unknown> | undefined> {
  const altById = (input.options.alt_text_by_asset_id ?? {}) as Record<string, unknown>;
  const alt = (m: MediaItem) =>
    m.altText ?? (typeof altById[m.assetId] === "string" ? (altById[m.assetId] as string) : "");
  const videos = input.media.filter((m) => m.contentType.startsWith("video/"));
  if (videos.length > 0) {
    if (input.media.length > 1)
      throw new ProviderError("rejected", "a Bluesky post takes one video and nothing else", {
        operation: "app.bsky.embed.video",
      });
    const video = videos[0]!;
    return {
      $type: "app.bsky.embed.video",
      video: await uploadBlob(xrpc, { destination: input.destination, media: video }),
      ...(alt(video) ? { alt: alt(video) } : {}),
      ...aspectRatio(video),
    };
  }
  if (input.media.length === 0) return undefined;
  const images = [];
  for (const media of input.media)
    images.push({
      image: await uploadBlob(xrpc, { destination: input.destination, media }),
      alt: alt(media),
      ...aspectRatio(media),
    });
  return { $type: "app.bsky.embed.images", images };
}

function strongRef(item: PublishedItem): { uri: string; cid: string } {
  const { uri, cid } = item.extra as { uri?: unknown; cid?: unknown };
  if (typeof uri !== "string" || typeof cid !== "string")
    throw new ProviderError("rejected", "the item replied to has no Bluesky uri and cid", {
      operation: "com.atproto.repo.createRecord",
    });
  return { uri, cid };
}

function aspectRatio(media: MediaItem): { aspectRatio?: { width: number; height: number } } {
  const ok = (n: number | null): n is number => n !== null && Number.isInteger(n) && n > 0;
  return ok(media.width) && ok(media.height)
    ? { aspectRatio: { width: media.width, height: media.height } }
    : {};
}
