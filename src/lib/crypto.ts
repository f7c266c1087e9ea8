import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  randomBytes,
  timingSafeEqual,
} from "node:crypto";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniformly random base62 text (rejection sampling, no modulo bias). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** Hex SHA-256 of a string or bytes. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** Constant-time comparison of two strings (false when lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/**
 * Keys derived from the one master secret (HERALD_SECRET_KEY), one per purpose, so a signature
 * made for one purpose (a cursor) can never be replayed as another (an upload URL).
 */
export class SecretBox {
  private readonly master: Buffer;
  constructor(masterSecret: string) {
    this.master = createHash("sha256").update(masterSecret).digest();
  }

  private key(purpose: string): Buffer {
    return createHmac("sha256", this.master).update(`herald:${purpose}`).digest();
  }

  /** base64url HMAC-SHA256 of `data` under the key for `purpose`. */
  sign(purpose: string, data: string): string {
    return createHmac("sha256", this.key(purpose)).update(data).digest("base64url");
  }

  /** Checks a signature made by `sign`, in constant time. */
  verify(purpose: string, data: string, signature: string): boolean {
    return safeEqual(this.sign(purpose, data), signature);
  }

  /** AES-256-GCM encryption for secrets at rest: `v1.<iv>.<tag>.<ciphertext>` in base64url. */
  encrypt(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key("at-rest"), iv);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [
      "v1",
      iv.toString("base64url"),
      cipher.getAuthTag().toString("base64url"),
      body.toString("base64url"),
    ].join(".");
  }

  /** Reverses `encrypt`; throws when the value was tampered with or made under another key. */
  decrypt(sealed: string): string {
    const [version, iv, tag, body] = sealed.split(".");
    if (version !== "v1" || !iv || !tag || body === undefined) throw new Error("unrecognised sealed value");
    const decipher = createDecipheriv("aes-256-gcm", this.key("at-rest"), Buffer.from(iv, "base64url"));
    decipher.setAuthTag(Buffer.from(tag, "base64url"));
    return Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString(
      "utf8",
    );
  }
}
