// How an upload is cut into parts (DESIGN.md, Assets): one rule the client computes before asking.

/** The contract's minimum part size (5 MiB). */
export const MIN_PART_SIZE = 5 * 1024 * 1024;
/** The contract's maximum number of parts. */
export const MAX_PARTS = 10_000;
/** Larger part sizes are multiples of 1 MiB. */
export const PART_SIZE_STEP = 1024 * 1024;
/**
 * The largest part Herald takes: parts sent through Herald (local storage) are request bodies,
 * and the server refuses bodies above 64 MiB. So an asset is at most 10,000 × 64 MiB (625 GiB).
 */
export const MAX_PART_SIZE = 64 * 1024 * 1024;
/** The largest asset: 10,000 parts of MAX_PART_SIZE. */
export const MAX_ASSET_BYTES = MAX_PARTS * MAX_PART_SIZE;

/**
 * The part size for `byteSize` bytes: 5,242,880, or, when that would need more than 10,000 parts,
 * the smallest multiple of 1 MiB that fits in 10,000.
 */
export function partSizeFor(byteSize: number): number {
  if (Math.ceil(byteSize / MIN_PART_SIZE) <= MAX_PARTS) return MIN_PART_SIZE;
  return Math.ceil(Math.ceil(byteSize / MAX_PARTS) / PART_SIZE_STEP) * PART_SIZE_STEP;
}

/** How many parts `byteSize` bytes make with `partSize`. */
export function partCountFor(byteSize: number, partSize: number): number {
  return Math.ceil(byteSize / partSize);
}

/** Byte length of part `partNumber` (1-based): `partSize`, except the last, which holds the rest. */
export function partLength(byteSize: number, partSize: number, partNumber: number): number {
  const count = partCountFor(byteSize, partSize);
  return partNumber < count ? partSize : byteSize - partSize * (count - 1);
}
