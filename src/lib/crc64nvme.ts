import { KERNEL_WASM_BASE64 } from "./crc64nvme-wasm/kernel.ts";

// CRC-64/NVME (the checksum S3 calls CRC64NVME): width 64, reflected polynomial 0x9A6C9329AC4BC9B5
// (normal form 0xAD93D23594C93659), init and xorout all ones. The hashing runs in our own
// WebAssembly slicing-by-16 kernel (src/lib/crc64nvme-wasm: generated WAT, embedded as base64, so it
// is inside the compiled binary; no native addon); the combine step is in BigInt (it runs once per
// part, never per byte).

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

const ALL_ONES = 0xffffffffffffffffn;

interface Kernel {
  /** Raw (pre-xorout) state in, state out (signed i64 as BigInt), over window[0..length). */
  update(state: bigint, length: number): bigint;
  window: Uint8Array;
}

let kernel: Kernel | undefined;

/** One module instance for the process (updates are synchronous, so hashers can share its window). */
function getKernel(): Kernel {
  if (kernel) return kernel;
  const module = new WebAssembly.Module(Buffer.from(KERNEL_WASM_BASE64, "base64"));
  const exports = new WebAssembly.Instance(module, {}).exports as {
    memory: WebAssembly.Memory;
    window: WebAssembly.Global;
    windowSize: WebAssembly.Global;
    init(): void;
    update(state: bigint, length: number): bigint;
  };
  exports.init();
  const window = new Uint8Array(exports.memory.buffer, exports.window.value, exports.windowSize.value);
  // Warm-up: one long loop gets the engine (JavaScriptCore) to tier the kernel up to its optimising
  // compiler early instead of after hundreds of MiB (a few ms, once per process).
  for (let i = 0; i < 2; i++) exports.update(0n, window.length);
  kernel = { update: exports.update, window };
  return kernel;
}

/** A fresh streaming CRC64NVME. */
export async function createCrc64Nvme(): Promise<Crc64Nvme> {
  const { update, window } = getKernel();
  let state = ALL_ONES;
  return {
    update: (chunk) => {
      for (let offset = 0; offset < chunk.length; offset += window.length) {
        const part = chunk.subarray(offset, offset + window.length);
        window.set(part);
        state = update(state, part.length);
      }
    },
    // The kernel hands i64 back as a signed BigInt; asUintN gives the unsigned 64-bit value.
    digest: () => BigInt.asUintN(64, ~state),
    reset: () => void (state = ALL_ONES),
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
