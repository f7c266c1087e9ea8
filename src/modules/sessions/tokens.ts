import { randomBase62, sha256Hex } from "../../lib/crypto.ts";

/**
 * A one-time secret of 43 base62 characters (256 bits) behind an optional prefix, and the SHA-256
 * hash that is the only form ever stored.
 */
export function newSecretToken(prefix = ""): { token: string; hash: string } {
  const token = prefix + randomBase62(43);
  return { token, hash: hashToken(token) };
}

/** The stored form of a token (lookups hash what was sent and compare hashes). */
export function hashToken(token: string): string {
  return sha256Hex(token);
}
