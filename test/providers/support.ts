import { expect } from "bun:test";
import { deflateSync } from "node:zlib";
import { ProviderError, type FailureKind, type MediaItem } from "../../src/providers/types.ts";

/** Awaits a call that must fail with a ProviderError of `kind`, and returns the error. */
export async function expectProviderError(promise: Promise<unknown>, kind: FailureKind): Promise<ProviderError> {
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
export function mediaItem(input: { assetId?: string; contentType?: string; bytes?: Uint8Array; byteSize?: number; width?: number | null; height?: number | null; altText?: string | null }): MediaItem {
  const bytes = input.bytes ?? makePng({ width: 4, height: 3 });
  return {
    assetId: input.assetId ?? "ast_1",
    contentType: input.contentType ?? "image/png",
    byteSize: input.byteSize ?? bytes.length,
    width: input.width === undefined ? 4 : input.width,
    height: input.height === undefined ? 3 : input.height,
    altText: input.altText === undefined ? "a small test image" : input.altText,
    read: async () => bytes,
  };
}

/** A real (tiny, valid) RGB PNG of the given size: signature, IHDR, one IDAT, IEND. */
export function makePng(input: { width: number; height: number }): Uint8Array {
  const { width, height } = input;
  const raw = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) raw.set([(x * 60) & 255, (y * 80) & 255, 160], y * (width * 3 + 1) + 1 + x * 3);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit, truecolour, deflate, no filter, no interlace
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return new Uint8Array(Buffer.concat([signature, chunk("IHDR", ihdr), chunk("IDAT", deflateSync(raw)), chunk("IEND", Buffer.alloc(0))]));
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** An origin on a loopback port nothing listens on (connection refused). */
export async function closedOrigin(): Promise<string> {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const origin = `http://127.0.0.1:${server.port}`;
  await server.stop(true);
  return origin;
}
