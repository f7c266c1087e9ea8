import { png } from "../assets/samples.ts";
import { expect } from "bun:test";
import {
  type DestinationRef,
  type FailureKind,
  isPending,
  type MediaItem,
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
