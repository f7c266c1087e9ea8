import { createHmac } from "node:crypto";
import { randomBase62 } from "../../lib/crypto.ts";

/** Prefix of signing secrets, as Stripe's verifiers expect them. */
export const SECRET_PREFIX = "whsec_";

/** A new signing secret: `whsec_` and 40 random base62 characters (about 238 bits). */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBase62(40);
}

/** The last four characters, shown on the endpoint after creation. */
export function lastFour(secret: string): string {
  return secret.slice(-4);
}

/** Hex HMAC-SHA256 of `<t>.<raw body>`, keyed with the whole secret string (prefix included) as UTF-8. */
export function signPayload(secret: string, timestampSec: number, rawBody: string): string {
  return createHmac("sha256", secret).update(`${timestampSec}.${rawBody}`).digest("hex");
}

/**
 * The `Service-Signature` header: `t=<unix seconds>,v1=<hex>` with one `v1` per active secret (the
 * current one first, then the previous one while a rotation's overlap lasts).
 */
export function signatureHeader(secrets: string[], timestampSec: number, rawBody: string): string {
  return [`t=${timestampSec}`, ...secrets.map((s) => `v1=${signPayload(s, timestampSec, rawBody)}`)].join(
    ",",
  );
}
