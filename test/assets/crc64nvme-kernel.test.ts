// The WebAssembly slicing-by-16 kernel (src/lib/crc64nvme-wasm) against independent references
// written here (a bitwise and a byte-table CRC in BigInt), over many lengths, unaligned offsets and
// chunkings.
import { describe, expect, test } from "bun:test";
import { createCrc64Nvme, crc64nvmeOf } from "../../src/lib/crc64nvme.ts";

const POLY = 0x9a6c9329ac4bc9b5n;

/** Bitwise reference (slow; short inputs only). */
function bitwise(bytes: Uint8Array): bigint {
  let c = 0xffffffffffffffffn;
  for (const b of bytes) {
    c ^= BigInt(b);
    for (let k = 0; k < 8; k++) c = c & 1n ? (c >> 1n) ^ POLY : c >> 1n;
  }
  return c ^ 0xffffffffffffffffn;
}

/** Byte-table reference in BigInt (fast enough for MiB). */
const TABLE = Array.from({ length: 256 }, (_, i) => {
  let c = BigInt(i);
  for (let k = 0; k < 8; k++) c = c & 1n ? (c >> 1n) ^ POLY : c >> 1n;
  return c;
});
function tableRef(bytes: Uint8Array): bigint {
  let c = 0xffffffffffffffffn;
  for (const b of bytes) c = (c >> 8n) ^ TABLE[Number((c ^ BigInt(b)) & 0xffn)]!;
  return c ^ 0xffffffffffffffffn;
}

const reference = async (bytes: Uint8Array) => tableRef(bytes);

function random(length: number, seed: number): Uint8Array {
  const out = new Uint8Array(length);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

describe("CRC64NVME kernel", () => {
  test("check value", async () => {
    expect(await crc64nvmeOf(new TextEncoder().encode("123456789"))).toBe(0xae8b14860a799888n);
    expect(await crc64nvmeOf(new Uint8Array(0))).toBe(0n);
  });

  test("matches the bitwise reference for lengths 0..300", async () => {
    const data = random(300 + 16, 7);
    for (let n = 0; n <= 300; n++) {
      const slice = data.subarray(n % 16, (n % 16) + n);
      expect(await crc64nvmeOf(slice)).toBe(bitwise(slice));
    }
  });

  test("matches the reference for every length 0..10,000 at unaligned offsets", async () => {
    const data = random(10_000 + 64, 42);
    // The reference of every prefix from each offset, in one pass per offset (the kernel runs per length).
    const expected = new Map<number, bigint[]>();
    for (let offset = 0; offset < 61; offset++) {
      const prefixes: bigint[] = [0n];
      let c = 0xffffffffffffffffn;
      for (let i = offset; i < offset + 10_000; i++) {
        c = (c >> 8n) ^ TABLE[Number((c ^ BigInt(data[i]!)) & 0xffn)]!;
        prefixes.push(c ^ 0xffffffffffffffffn);
      }
      expected.set(offset, prefixes);
    }
    for (let n = 0; n <= 10_000; n++) {
      const offset = (n * 7) % 61;
      expect(await crc64nvmeOf(data.subarray(offset, offset + n))).toBe(expected.get(offset)![n]!);
    }
  }, 60_000);

  test("matches the reference on a few MiB, in odd chunks, across the copy window", async () => {
    for (const [length, seed] of [
      [1024 * 1024 - 1, 1],
      [1024 * 1024, 2],
      [1024 * 1024 + 17, 3],
      [3 * 1024 * 1024 + 12_345, 4],
    ] as const) {
      const data = random(length + 3, seed).subarray(3);
      const expected = await reference(data);
      expect(await crc64nvmeOf(data)).toBe(expected);
      const crc = await createCrc64Nvme();
      let offset = 0;
      for (let step = 1; offset < data.length; step = (step * 5 + 3) % 300_007) {
        crc.update(data.subarray(offset, offset + step));
        offset += step;
      }
      expect(crc.digest()).toBe(expected);
    }
  }, 120_000);

  test("digest mid-stream, keep going, reset; interleaved hashers do not disturb each other", async () => {
    const data = random(100_000, 9);
    const a = await createCrc64Nvme();
    const b = await createCrc64Nvme();
    a.update(data.subarray(0, 50_001));
    b.update(data.subarray(0, 777));
    expect(a.digest()).toBe(await reference(data.subarray(0, 50_001)));
    a.update(data.subarray(50_001));
    b.update(data.subarray(777, 2000));
    expect(a.digest()).toBe(await reference(data));
    expect(b.digest()).toBe(await reference(data.subarray(0, 2000)));
    a.reset();
    expect(a.digest()).toBe(0n);
    a.update(data);
    expect(a.digest()).toBe(await reference(data));
  });
});
