import { createHash } from "node:crypto";

/** One injected failure: answered instead of the real handler (the request is not acted on). */
export interface FailSpec {
  status: number;
  /** Defaults to the network's usual body for the status. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Only requests whose path contains this fail (e.g. "createRecord", "/api/v1/statuses"); others pass. */
  path?: string;
}

/** A request the fake received, for assertions (headers lower-cased). */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
}

/** The switches every fake has. */
export interface FakeControls {
  /** Every request received, in order. */
  requests: RecordedRequest[];
  /** Wait this long before handling each request (slow network; a client timeout fires first). */
  delayMs: number;
  /** The create call (post a status / record) is stored but never answered: the outcome-unknown case. */
  hangAfterReceive: boolean;
  /** The next `n` matching requests answer with `spec` instead of being handled. */
  failNext(n: number, spec: FailSpec): void;
}

/** The switches of a new fake, all off; `failNext` queues into `failures`. */
export function newControls(
  failures: { remaining: number; spec: FailSpec }[],
): FakeControls & { origin: string; stop: () => Promise<void> } {
  return {
    origin: "",
    stop: async () => {},
    requests: [],
    delayMs: 0,
    hangAfterReceive: false,
    failNext: (n, spec) => void failures.push({ remaining: n, spec }),
  };
}

/** Starts a Bun server on 127.0.0.1:0 around a fake's router, applying the shared switches first. */
export function serveFake(input: {
  controls: FakeControls;
  failures: { remaining: number; spec: FailSpec }[];
  defaultFailure: (status: number) => { body: unknown; headers?: Record<string, string> };
  route: (request: Request, url: URL) => Promise<Response>;
}): { origin: string; stop: () => Promise<void> } {
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    fetch: async (request) => {
      const url = new URL(request.url);
      input.controls.requests.push({
        method: request.method,
        path: url.pathname,
        headers: Object.fromEntries(request.headers),
      });
      if (input.controls.delayMs > 0) await Bun.sleep(input.controls.delayMs);
      const failure = input.failures.find(
        (f) => f.remaining > 0 && (!f.spec.path || url.pathname.includes(f.spec.path)),
      );
      if (failure) {
        failure.remaining--;
        const fallback = input.defaultFailure(failure.spec.status);
        return json(failure.spec.body ?? fallback.body, failure.spec.status, {
          ...fallback.headers,
          ...failure.spec.headers,
        });
      }
      return input.route(request, url);
    },
  });
  return { origin: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) };
}

/** A JSON response. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "content-type": "application/json; charset=utf-8", ...headers },
  });
}

/** A promise that never settles: the request was received and is never answered. */
export function never(): Promise<Response> {
  return new Promise<Response>(() => {});
}

/** Grapheme count, written independently of the adapters so the fakes do not share their bugs. */
export function graphemes(text: string): number {
  return [...new Intl.Segmenter("en", { granularity: "grapheme" }).segment(text)].length;
}

/** Reads a JSON or form body (clients send either) into a plain object; `a[]` form keys become arrays. */
export async function readBody(request: Request): Promise<Record<string, any>> {
  const type = request.headers.get("content-type") ?? "";
  if (type.includes("application/json")) {
    try {
      const value = await request.json();
      return value && typeof value === "object" ? (value as Record<string, any>) : {};
    } catch {
      return {};
    }
  }
  if (type.includes("application/x-www-form-urlencoded") || type.includes("multipart/form-data")) {
    const form = await request.formData();
    const out: Record<string, any> = {};
    for (const [key, value] of form.entries()) {
      if (key.endsWith("[]")) (out[key.slice(0, -2)] ??= []).push(value);
      else out[key] = value;
    }
    return out;
  }
  return {};
}

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567";

/**
 * A real CIDv1 (sha2-256) in base32, as the PDS makes: codec 0x55 raw for blobs ("bafkrei…"), 0x71 dag-cbor
 * for records ("bafyrei…").
 */
export function cid(data: Uint8Array | string, codec: 0x55 | 0x71): string {
  const digest = createHash("sha256").update(data).digest();
  const bytes = Uint8Array.from([0x01, codec, 0x12, 0x20, ...digest]);
  let bits = 0;
  let value = 0;
  let out = "b";
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** A random opaque token with a readable prefix. */
export function token(prefix: string): string {
  return `${prefix}${crypto.randomUUID().replaceAll("-", "")}`;
}
