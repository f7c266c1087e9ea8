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
  /** Requests received and not yet answered, and the most there ever were at once. */
  inFlight: number;
  maxInFlight: number;
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
    inFlight: 0,
    maxInFlight: 0,
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
      const controls = input.controls;
      controls.maxInFlight = Math.max(controls.maxInFlight, ++controls.inFlight);
      try {
        return await handle(request);
      } finally {
        controls.inFlight--;
      }
    },
  });
  const handle = async (request: Request): Promise<Response> => {
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
  };
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

/** What had arrived of a request when the cut proxy reset its connection. */
export interface CutRequest {
  method: string;
  /** Path and query. */
  target: string;
  /** Lower-cased, with the proxy's `x-fake-connection`. */
  headers: Record<string, string>;
  /** The body bytes that arrived before the reset (a prefix of what was sent). */
  received: Uint8Array;
  /** The body length the request announced. */
  declaredLength: number;
}

/** The next request matching `match` is reset once `keepBytes` of its body arrived. */
export interface CutSpec {
  match: (head: { method: string; target: string; headers: Record<string, string> }) => boolean;
  keepBytes: number;
  /** Called with what arrived, before the reset: the fake keeps what its network documents keeping. */
  onCut: (cut: CutRequest) => void;
}

/** The header the cut proxy adds to every request it passes on: `<connection>-<request on it>`, e.g. `3-1`. */
export const CONNECTION_HEADER = "x-fake-connection";

/** Whether a recorded request was the first on its TCP connection (needs the cut proxy in front). */
export function onFreshConnection(headers: Record<string, string>): boolean {
  return headers[CONNECTION_HEADER]?.endsWith("-1") === true;
}

interface ProxySide {
  socket: import("bun").Socket<ProxyState> | null;
  queue: Uint8Array[];
}

interface ProxyState {
  id: number;
  requests: number;
  upstream: ProxySide;
  client: ProxySide;
  /** Bytes of the client stream not yet parsed (a head in pieces). */
  pending: Uint8Array;
  /** Body bytes of the current request still to pass on (or to collect, when it is being cut). */
  bodyLeft: number;
  /** Raw mode: a body Herald's parser cannot follow (chunked); everything is passed on unread. */
  raw: boolean;
  cutting: { spec: CutSpec; head: Omit<CutRequest, "received">; parts: Uint8Array[]; got: number } | null;
  closed: boolean;
}

/** The cut proxy of a fake started with `cuttable`, as its switches use it. */
export type CutProxy = Awaited<ReturnType<typeof startCutProxy>>;

/**
 * Where a fake answers: behind a cut proxy when `cuttable` (so a test can reset a connection
 * mid-body), else the server itself; `stop` stops both.
 */
export async function behindCutProxy(
  server: { origin: string; stop(): Promise<void> },
  cuttable: boolean | undefined,
): Promise<{ cuts: CutProxy | null; origin: string; stop(): Promise<void> }> {
  const cuts = cuttable ? await startCutProxy(server.origin) : null;
  return {
    cuts,
    origin: cuts?.origin ?? server.origin,
    stop: async () => {
      await cuts?.stop();
      await server.stop();
    },
  };
}

/** The cut proxy a switch needs (`name`): a fake started without `cuttable` has none. */
export function cutProxyFor(cuts: CutProxy | null, name: string): CutProxy {
  if (!cuts) throw new Error(`${name} needs the fake started with cuttable: true`);
  return cuts;
}

/**
 * A TCP proxy in front of a fake that can reset a connection part-way through a request body, as a
 * network dropping mid-upload does: the client's fetch sees the connection die after some of the
 * chunk went out, on whichever connection (fresh or kept alive) it used. Requests it passes on carry
 * `x-fake-connection`, so a fake can tell whether a chunk came on a connection of its own.
 */
export async function startCutProxy(upstreamOrigin: string): Promise<{
  origin: string;
  cutNext(spec: CutSpec): void;
  stop(): Promise<void>;
}> {
  const upstream = new URL(upstreamOrigin);
  const armed: CutSpec[] = [];
  let connections = 0;
  const open = new Set<ProxyState>();

  const send = (side: ProxySide, data: Uint8Array) => {
    if (data.length === 0) return;
    if (!side.socket || side.queue.length > 0) return void side.queue.push(data);
    const written = side.socket.write(data);
    if (written < data.length) side.queue.push(data.subarray(Math.max(0, written)));
  };
  const flush = (side: ProxySide) => {
    while (side.socket && side.queue.length > 0) {
      const data = side.queue[0]!;
      const written = side.socket.write(data);
      if (written < data.length) {
        side.queue[0] = data.subarray(Math.max(0, written));
        return;
      }
      side.queue.shift();
    }
  };
  const close = (state: ProxyState) => {
    if (state.closed) return;
    state.closed = true;
    open.delete(state);
    state.client.socket?.end();
    state.upstream.socket?.end();
  };

  /** Reads the client's stream: heads are parsed (and tagged), bodies passed on or collected for a cut. */
  const fromClient = (state: ProxyState, data: Uint8Array) => {
    if (state.raw) return send(state.upstream, data);
    let rest = state.pending.length > 0 ? Buffer.concat([state.pending, data]) : Buffer.from(data);
    state.pending = new Uint8Array(0);
    while (rest.length > 0) {
      if (state.bodyLeft > 0) {
        const part = rest.subarray(0, state.bodyLeft);
        rest = rest.subarray(part.length);
        state.bodyLeft -= part.length;
        const cutting = state.cutting;
        if (!cutting) {
          send(state.upstream, part);
          continue;
        }
        cutting.parts.push(part);
        cutting.got += part.length;
        if (cutting.got < cutting.spec.keepBytes && state.bodyLeft > 0) continue;
        const received = new Uint8Array(Buffer.concat(cutting.parts).subarray(0, cutting.spec.keepBytes));
        cutting.spec.onCut({ ...cutting.head, received });
        state.client.socket?.terminate();
        close(state);
        return;
      }
      const end = rest.indexOf("\r\n\r\n");
      if (end < 0) {
        state.pending = new Uint8Array(rest);
        return;
      }
      const lines = rest.subarray(0, end).toString("latin1").split("\r\n");
      rest = rest.subarray(end + 4);
      const [method = "", target = ""] = lines[0]!.split(" ");
      const headers: Record<string, string> = {};
      for (const line of lines.slice(1)) {
        const colon = line.indexOf(":");
        if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      state.requests += 1;
      const tag = `${state.id}-${state.requests}`;
      const declaredLength = Number(headers["content-length"] ?? "0");
      const at = armed.findIndex((spec) => spec.match({ method, target, headers }));
      if (at >= 0 && !headers["transfer-encoding"]) {
        const spec = armed.splice(at, 1)[0]!;
        const tagged = { ...headers, [CONNECTION_HEADER]: tag };
        state.cutting = {
          spec,
          head: { method, target, headers: tagged, declaredLength },
          parts: [],
          got: 0,
        };
        state.bodyLeft = declaredLength;
        continue;
      }
      send(
        state.upstream,
        Buffer.from(`${lines.join("\r\n")}\r\n${CONNECTION_HEADER}: ${tag}\r\n\r\n`, "latin1"),
      );
      if (headers["transfer-encoding"]) {
        state.raw = true;
        return send(state.upstream, rest);
      }
      state.bodyLeft = Number.isFinite(declaredLength) ? declaredLength : 0;
    }
  };

  const server = Bun.listen<ProxyState>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        const state: ProxyState = {
          id: ++connections,
          requests: 0,
          upstream: { socket: null, queue: [] },
          client: { socket: client, queue: [] },
          pending: new Uint8Array(0),
          bodyLeft: 0,
          raw: false,
          cutting: null,
          closed: false,
        };
        client.data = state;
        open.add(state);
        void Bun.connect<ProxyState>({
          hostname: upstream.hostname,
          port: Number(upstream.port),
          data: state,
          socket: {
            open(socket) {
              if (state.closed) return void socket.end();
              state.upstream.socket = socket;
              flush(state.upstream);
            },
            data: (_socket, data) => send(state.client, data),
            drain: () => flush(state.upstream),
            close: () => close(state),
            error: () => close(state),
          },
        }).catch(() => close(state));
      },
      data: (client, data) => fromClient(client.data, data),
      drain: (client) => flush(client.data.client),
      close: (client) => close(client.data),
      error: (client) => close(client.data),
    },
  });
  return {
    origin: `http://127.0.0.1:${server.port}`,
    cutNext: (spec) => void armed.push(spec),
    stop: async () => {
      for (const state of [...open]) {
        state.client.socket?.terminate();
        close(state);
      }
      server.stop(true);
    },
  };
}
