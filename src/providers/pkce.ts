import { createHash, randomBytes } from "node:crypto";

/** The S256 code challenge for a PKCE code verifier (base64url SHA-256, RFC 7636). */
export function pkceChallenge(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

/**
 * A fresh PKCE pair: keep `verifier` secret with the connection session, send `challenge` in the
 * authorization URL.
 */
export function createPkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: pkceChallenge(verifier) };
}
