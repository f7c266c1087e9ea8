import { randomBytes } from "node:crypto";

// RFC 8628 §6.1: consonants only (no vowels, so no words; no easily confused characters), eight of
// them (20^8 ≈ 2.6e10 codes), shown as two groups of four.
const ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const LENGTH = 8;

/** A new user code in its normalized form (`WDJBMJHT`); `formatUserCode` gives what people see. */
export function newUserCode(): string {
  let code = "";
  while (code.length < LENGTH) {
    for (const byte of randomBytes(LENGTH * 2)) {
      // 240 is the largest multiple of 20 below 256: no modulo bias.
      if (byte < 240 && code.length < LENGTH) code += ALPHABET[byte % ALPHABET.length];
    }
  }
  return code;
}

/** The code as shown and typed: `WDJB-MJHT`. */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * What a person typed, normalized: case and separators (dashes, spaces) do not matter. Null when it
 * cannot be a code at all, so nothing is looked up.
 */
export function normalizeUserCode(typed: string): string | null {
  const code = typed.toUpperCase().replace(/[\s-]/g, "");
  if (code.length !== LENGTH) return null;
  for (const c of code) if (!ALPHABET.includes(c)) return null;
  return code;
}
