// The record key Herald chooses for each Bluesky post it creates: a TID (atproto's timestamp
// identifier) derived from the post and the item, so every attempt at one item names the same record
// and the PDS can never hold two (a second create with the key is refused, a read of it finds the first).
import { createHash } from "node:crypto";

/** atproto's base32-sortable alphabet: TIDs sort as strings in the order of their numbers. */
const S32 = "234567abcdefghijklmnopqrstuvwxyz";
/** The ULID alphabet (Crockford's base32), lower case as Herald's ids write it. */
const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

/** A TID's syntax: 13 characters, the first ≤ `j` because the top bit of the 64 is zero. */
export const TID_PATTERN = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;

const MAX_TIMESTAMP_US = (1n << 53n) - 1n;

/** Encodes 53 bits of microseconds and a 10-bit clock id as a TID. */
export function encodeTid(timestampUs: bigint, clockId: number): string {
  if (timestampUs < 0n || timestampUs > MAX_TIMESTAMP_US) throw new RangeError("TID timestamp out of range");
  if (!Number.isInteger(clockId) || clockId < 0 || clockId > 1023)
    throw new RangeError("TID clock id out of range");
  let value = (timestampUs << 10n) | BigInt(clockId);
  let out = "";
  for (let i = 0; i < 13; i++) {
    out = S32[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}

/** The microseconds and clock id of a TID (its syntax checked first). */
export function decodeTid(tid: string): { timestampUs: bigint; clockId: number } {
  if (!TID_PATTERN.test(tid)) throw new RangeError(`not a TID: ${tid}`);
  let value = 0n;
  for (const char of tid) value = (value << 5n) | BigInt(S32.indexOf(char));
  return { timestampUs: value >> 10n, clockId: Number(value & 1023n) };
}

/**
 * The record key of one item of a post, from its `idempotencyKey` (`<postId>.<index>`, the same on
 * every attempt). A post id ends in a ULID: the key's time is the post's creation millisecond, its
 * microseconds the ULID's random part modulo 1000 (ids made in one millisecond by one process count
 * up by one, so they differ), and the clock id is the item index plus a hundred times a digit of
 * that random part (items of one post differ and sort in thread order: a body has at most 100).
 * Any other key is hashed over the whole range.
 */
export function itemRecordKey(input: { idempotencyKey: string; itemIndex: number }): string {
  const suffix = `.${input.itemIndex}`;
  const post = input.idempotencyKey.endsWith(suffix)
    ? input.idempotencyKey.slice(0, -suffix.length)
    : input.idempotencyKey;
  const ulid = /_([0-9a-hjkmnp-tv-z]{26})$/i.exec(post)?.[1]?.toLowerCase();
  if (ulid && ulid[0]! <= "7") {
    const ms = crockford(ulid.slice(0, 10));
    const random = crockford(ulid.slice(10));
    const timestampUs = ms * 1000n + (random % 1000n);
    if (timestampUs <= MAX_TIMESTAMP_US)
      return encodeTid(timestampUs, (Number((random / 1000n) % 10n) * 100 + input.itemIndex) % 1024);
  }
  const digest = createHash("sha256").update(`${post}\n${input.itemIndex}`).digest();
  return encodeTid(digest.readBigUInt64BE(0) & MAX_TIMESTAMP_US, digest.readUInt16BE(8) & 1023);
}

function crockford(text: string): bigint {
  let value = 0n;
  for (const char of text) value = (value << 5n) | BigInt(CROCKFORD.indexOf(char));
  return value;
}
