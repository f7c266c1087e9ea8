import { png } from "../assets/samples.ts";
import { afterAll, beforeAll, expect } from "bun:test";
import {
  type DestinationRef,
  type FailureKind,
  isPending,
  type MediaItem,
  type NetworkApp,
  type PendingItem,
  type ProviderAdapter,
  ProviderError,
  type PublishedItem,
  type PublishItemInput,
  type PublishOutcome,
} from "../../src/providers/types.ts";

/** Awaits a call that must fail with a ProviderError of `kind`, and returns the error. */
export async function expectProviderError(
  promise: Promise<unknown>,
  kind: FailureKind,
): Promise<ProviderError> {
  let caught: unknown = null;
  try {
    await promise;
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(ProviderError);
  const error = caught as ProviderError;
  if (error.kind !== kind) throw new Error(`expected ${kind}, got ${error.kind}: ${error.message}`);
  return error;
}

/** A media item over in-memory bytes. */
export function mediaItem(input: {
  assetId?: string;
  contentType?: string;
  bytes?: Uint8Array;
  byteSize?: number;
  width?: number | null;
  height?: number | null;
  altText?: string | null;
  /** The public URL a pull-by-URL network fetches (default: a closed loopback port). */
  publicUrl?: string;
}): MediaItem {
  const bytes = input.bytes ?? makePng({ width: 4, height: 3 });
  return {
    assetId: input.assetId ?? "ast_1",
    contentType: input.contentType ?? "image/png",
    byteSize: input.byteSize ?? bytes.length,
    width: input.width === undefined ? 4 : input.width,
    height: input.height === undefined ? 3 : input.height,
    altText: input.altText === undefined ? "a small test image" : input.altText,
    read: async () => bytes,
    publicUrl: () => input.publicUrl ?? "http://127.0.0.1:9/downloads/unused",
  };
}

/**
 * Publishes an item the way the engine does: when the network hands back a pending item, its
 * status is checked (every `pollMs`) until it is published; `gone` sends it again.
 */
export async function publishFully(
  adapter: ProviderAdapter,
  input: PublishItemInput,
  pollMs = 5,
  maxChecks = 200,
): Promise<PublishedItem> {
  let outcome: PublishOutcome = await adapter.publishItem(input);
  const since = Date.now();
  for (let check = 0; isPending(outcome); check++) {
    if (check === maxChecks) throw new Error(`still pending after ${maxChecks} checks`);
    await Bun.sleep(pollMs);
    const status = await adapter.checkPending!({
      destination: input.destination,
      item: input,
      data: outcome.data,
      since,
    });
    if (status.state === "published") return status.item;
    outcome =
      status.state === "gone"
        ? await adapter.publishItem(input)
        : { ...outcome, data: status.data ?? outcome.data, checkAgainAt: status.checkAgainAt };
  }
  return outcome;
}

/** A real (tiny, valid) RGB PNG of the given size (the assets suite's writer). */
export function makePng(input: { width: number; height: number }): Uint8Array {
  return new Uint8Array(png(input.width, input.height));
}

/** An origin on a loopback port nothing listens on (connection refused). */
export async function closedOrigin(): Promise<string> {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const origin = `http://127.0.0.1:${server.port}`;
  await server.stop(true);
  return origin;
}

/** One body item to publish to `destination` ("hello", first item, no media), with overrides. */
export function publishInput(
  destination: DestinationRef,
  over: Partial<PublishItemInput> = {},
): PublishItemInput {
  return {
    destination,
    text: "hello",
    headline: over.text?.split("\n")[0] ?? "hello",
    itemIndex: 0,
    media: [],
    options: {},
    root: null,
    parent: null,
    idempotencyKey: `post_1:${over.itemIndex ?? 0}`,
    ...over,
  };
}

/** An outcome that must be published at once (not pending). */
export function expectPublished(outcome: unknown): PublishedItem {
  expect(isPending(outcome as PublishedItem)).toBe(false);
  return outcome as PublishedItem;
}

/** An outcome that must be a pending item. */
export function expectPendingItem(outcome: unknown): PendingItem {
  expect(isPending(outcome as PendingItem)).toBe(true);
  return outcome as PendingItem;
}

/** A network app whose API, sign-in and token endpoints are all on a fake's origin. */
export function fakeApp(
  fake: { origin: string; clientId: string; clientSecret: string },
  over: Partial<NetworkApp> = {},
): NetworkApp {
  const { origin, clientId, clientSecret } = fake;
  return {
    clientId,
    clientSecret,
    apiBase: origin,
    authBase: origin,
    tokenBase: origin,
    scopes: null,
    ...over,
  };
}

/** Files by path, with their media type. */
export type ServedFiles = Map<string, { type: string; bytes: Uint8Array }>;

/**
 * The files a pull-by-URL network downloads (Threads, Instagram, TikTok): a loopback server standing in
 * for Herald's signed download URLs, started and stopped with the test file. `served(path)` is a media
 * item whose public URL is one of them (an unknown path answers 404).
 */
export function servedFiles(files: ServedFiles, fallbackType: string) {
  let server: ReturnType<typeof Bun.serve> | null = null;
  const origin = () => `http://127.0.0.1:${server!.port}`;
  beforeAll(() => {
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: (request) => {
        const file = files.get(new URL(request.url).pathname);
        return file
          ? new Response(file.bytes, { headers: { "content-type": file.type } })
          : new Response("gone", { status: 404 });
      },
    });
  });
  afterAll(() => server?.stop(true));
  return {
    origin,
    served(path: string, over: Partial<Parameters<typeof mediaItem>[0]> = {}): MediaItem {
      const file = files.get(path);
      return mediaItem({
        assetId: `ast_${path.slice(1).split(".")[0]}`,
        contentType: file?.type ?? fallbackType,
        bytes: file?.bytes,
        altText: null,
        publicUrl: `${origin()}${path}`,
        ...over,
      });
    },
  };
}
