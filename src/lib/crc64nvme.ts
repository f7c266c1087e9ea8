import { createCRC64, type IHasher } from "hash-wasm";

// CRC-64/NVME (the checksum S3 calls CRC64NVME): width 64, reflected polynomial 0x9A6C9329AC4BC9B5
// (normal form 0xAD93D23594C93659), init and xorout all ones. The hashing runs in hash-wasm's
// WebAssembly slicing-by-8 (embedded in the compiled binary, no native addon); the combine step is
// ours, in BigInt (it runs once per part, never per byte).

/** The reflected polynomial, as hash-wasm takes it (hex, no prefix). */
const POLYNOMIAL_HEX = "9a6c9329ac4bc9b5";
const POLYNOMIAL = 0x9a6c9329ac4bc9b5n;
const TOP = 1n << 63n;

/** A running CRC64NVME over a stream: `update` per chunk, then `digest`. */
export interface Crc64Nvme {
  update(chunk: Uint8Array): void;
  /** The value of everything given so far (the hasher can keep going afterwards). */
  digest(): bigint;
  /** Starts over, as if new (cheaper than creating another). */
  reset(): void;
}

/** A fresh streaming CRC64NVME. */
export async function createCrc64Nvme(): Promise<Crc64Nvme> {
  const hasher: IHasher = await createCRC64(POLYNOMIAL_HEX);
  hasher.init();
  return {
    update: (chunk) => void hasher.update(chunk),
    digest: () => {
      // hash-wasm's digest ends the hasher; save and restore its state so `digest` can be called mid-stream.
      const state = hasher.save();
      const value = bytesToBigInt(hasher.digest("binary"));
      hasher.load(state);
      return value;
    },
    reset: () => void hasher.init(),
  };
}

/** CRC64NVME of whole bytes. */
export async function crc64nvmeOf(bytes: Uint8Array): Promise<bigint> {
  const crc = await createCrc64Nvme();
  crc.update(bytes);
  return crc.digest();
}

/** The wire form S3 uses: base64 of the 8 big-endian bytes (`"123456789"` → `rosUhgp5mIg=`). */
export function crc64nvmeToBase64(value: bigint): string {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(value);
  return bytes.toString("base64");
}

/** Parses the wire form; null unless it is exactly 8 bytes in canonical base64. */
export function crc64nvmeFromBase64(text: string): bigint | null {
  if (!/^[A-Za-z0-9+/]{11}=$/.test(text)) return null;
  const bytes = Buffer.from(text, "base64");
  if (bytes.length !== 8 || bytes.toString("base64") !== text) return null;
  return bytes.readBigUInt64BE();
}

/** The lower-case hex form (16 digits), used in ETags and file names. */
export function crc64nvmeToHex(value: bigint): string {
  return value.toString(16).padStart(16, "0");
}

function bytesToBigInt(bytes: Uint8Array): bigint {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).readBigUInt64BE();
}

// ---- combine: CRC(A ‖ B) from CRC(A), CRC(B) and len(B), as zlib's crc32_combine does it ----------

/** a·b mod P in the reflected representation (bit 63 is x^0). */
function multModP(a: bigint, b: bigint): bigint {
  let m = TOP;
  let product = 0n;
  for (;;) {
    if (a & m) {
      product ^= b;
      if ((a & (m - 1n)) === 0n) break;
    }
    m >>= 1n;
    b = b & 1n ? (b >> 1n) ^ POLYNOMIAL : b >> 1n;
  }
  return product;
}

/** X2N[k] = x^(2^k) mod P. */
const X2N: bigint[] = (() => {
  const table: bigint[] = [TOP >> 1n]; // x^1
  for (let k = 1; k < 64; k++) table.push(multModP(table[k - 1]!, table[k - 1]!));
  return table;
})();

/** x^(n·2^k) mod P. */
function x2nModP(n: number, k: number): bigint {
  let p = TOP; // x^0
  let rest = BigInt(n);
  while (rest > 0n) {
    if (rest & 1n) p = multModP(X2N[k & 63]!, p);
    rest >>= 1n;
    k++;
  }
  return p;
}

/**
 * CRC64NVME of the concatenation A ‖ B given CRC(A), CRC(B) and the byte length of B: the
 * full-object checksum of a multipart upload from its part checksums, without reading a byte.
 */
export function combineCrc64Nvme(crcA: bigint, crcB: bigint, lengthB: number): bigint {
  if (lengthB === 0) return crcA;
  return multModP(x2nModP(lengthB, 3), crcA) ^ crcB;
}
