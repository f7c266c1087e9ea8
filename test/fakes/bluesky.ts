// A faithful local fake of a Bluesky PDS (providers.md §2, §14): createSession / refreshSession with
// rotating opaque tokens and TTLs, uploadBlob with real CIDs, createRecord validating the post record
// (300 graphemes / 3000 bytes, embeds, facets, reply refs) under the client's TID record key or its
// own, putRecord, resolveHandle, getRecord (400 RecordNotFound when absent); XRPC error
// bodies `{error, message}`, 400 ExpiredToken, 429 with RateLimit-* headers (reset in unix seconds).
import {
  cid,
  graphemes,
  json,
  never,
  newControls,
  readBody,
  serveFake,
  token,
  type FailSpec,
  type FakeControls,
} from "./shared.ts";

/** A post record the fake stored. */
export interface FakeRecord {
  uri: string;
  cid: string;
  did: string;
  rkey: string;
  record: Record<string, any>;
  /** What readers did with it (tests set these; app.bsky.feed.getPosts reports them). */
  counts?: { likes?: number; reposts?: number; replies?: number; quotes?: number; bookmarks?: number };
}

/** An account of the fake PDS. */
export interface FakeAccount {
  did: string;
  handle: string;
  password: string;
  /** The app password was revoked: createSession answers 401. */
  passwordRevoked: boolean;
}

/** Settings of the fake; the clock decides token expiry. */
export interface BlueskyFakeOptions {
  /** Access token lifetime, ms (default 2 h like the reference PDS). */
  accessTtlMs?: number;
  /** Refresh token lifetime, ms (default 90 days). */
  refreshTtlMs?: number;
  now?: () => number;
}

/** The running fake: its origin, what it stored, and its switches. */
export interface BlueskyFake extends FakeControls {
  origin: string;
  stop(): Promise<void>;
  accounts: FakeAccount[];
  records: FakeRecord[];
  blobs: { cid: string; did: string; mimeType: string; size: number }[];
  accessTtlMs: number;
  /** Every session (access and refresh tokens) is revoked; the app password still works. */
  revokeTokens(): void;
  /** Every access token issued so far answers 400 ExpiredToken. */
  expireAccessTokens(): void;
  /** Every refresh token issued so far answers 400 ExpiredToken. */
  expireRefreshTokens(): void;
  /** The account's app password stops working (createSession → 401). */
  revokeAppPassword(handle: string): void;
}

interface Session {
  did: string;
  accessJwt: string;
  refreshJwt: string;
  accessExpiresAt: number;
  refreshExpiresAt: number;
  /** Revoked by the switch: both tokens are dead. */
  revoked: boolean;
  /** The refresh token was used once (rotation); the access token lives on until it expires. */
  rotated: boolean;
}

const S32 = "234567abcdefghijklmnopqrstuvwxyz";
/** atproto's TID syntax: 13 sortable-base32 characters, the top bit zero. */
const TID = /^[234567abcdefghij][234567abcdefghijklmnopqrstuvwxyz]{12}$/;

/** Starts the fake on 127.0.0.1 at a free port, with accounts alice.test and bob.test. */
export async function startBlueskyFake(options: BlueskyFakeOptions = {}): Promise<BlueskyFake> {
  const now = options.now ?? Date.now;
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const sessions: Session[] = [];
  let lastTid = 0n;

  const fake: BlueskyFake = {
    ...newControls(failures),
    accounts: [
      {
        did: "did:plc:alice7k4qzyyq3qyd3xg2ww2",
        handle: "alice.test",
        password: "alice-app-pass",
        passwordRevoked: false,
      },
      {
        did: "did:plc:bob5v6tq2ppjqegufzjzaqbm",
        handle: "bob.test",
        password: "bob-app-pass",
        passwordRevoked: false,
      },
    ],
    records: [],
    blobs: [],
    accessTtlMs: options.accessTtlMs ?? 2 * 3600_000,
    revokeTokens: () => sessions.forEach((s) => (s.revoked = true)),
    expireAccessTokens: () =>
      sessions.forEach((s) => (s.accessExpiresAt = Math.min(s.accessExpiresAt, now() - 1))),
    expireRefreshTokens: () =>
      sessions.forEach((s) => (s.refreshExpiresAt = Math.min(s.refreshExpiresAt, now() - 1))),
    revokeAppPassword: (handle) =>
      fake.accounts.filter((a) => a.handle === handle).forEach((a) => (a.passwordRevoked = true)),
  };

  const xrpcError = (status: number, error: string, message: string) => json({ error, message }, status);
  const invalid = (message: string) => xrpcError(400, "InvalidRequest", message);
  const openSession = (did: string): Session => {
    const session = {
      did,
      accessJwt: token("eyJhY2Nlc3Mi."),
      refreshJwt: token("eyJyZWZyZXNoIi."),
      accessExpiresAt: now() + fake.accessTtlMs,
      refreshExpiresAt: now() + (options.refreshTtlMs ?? 90 * 86_400_000),
      revoked: false,
      rotated: false,
    };
    sessions.push(session);
    return session;
  };
  const sessionJson = (s: Session) => {
    const account = fake.accounts.find((a) => a.did === s.did)!;
    return {
      did: s.did,
      handle: account.handle,
      email: `${account.handle.split(".")[0]}@example.com`,
      emailConfirmed: true,
      accessJwt: s.accessJwt,
      refreshJwt: s.refreshJwt,
      active: true,
    };
  };
  /** The session of a valid access token, or the XRPC error the PDS answers. */
  const authenticate = (request: Request): Session | Response => {
    const bearer = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    if (!bearer) return xrpcError(401, "AuthMissing", "Authentication Required");
    const session = sessions.find((s) => s.accessJwt === bearer);
    if (!session || session.revoked) return xrpcError(400, "InvalidToken", "Token could not be verified");
    if (session.accessExpiresAt <= now()) return xrpcError(400, "ExpiredToken", "Token has expired");
    return session;
  };
  /** A TID record key: 53 bits of microseconds and 10 bits of clock id, sortable base32. */
  const tid = (): string => {
    let value = (BigInt(now()) * 1000n) << 10n;
    if (value <= lastTid) value = lastTid + 1n;
    lastTid = value;
    let out = "";
    for (let i = 0; i < 13; i++) out = S32[Number((value >> BigInt(i * 5)) & 31n)] + out;
    return out;
  };

  async function route(request: Request, url: URL): Promise<Response> {
    const nsid = url.pathname.replace(/^\/xrpc\//, "");
    const q = url.searchParams;
    if (request.method === "POST" && nsid === "com.atproto.server.createSession") {
      const body = await readBody(request);
      const id = String(body.identifier ?? "").toLowerCase();
      const account = fake.accounts.find(
        (a) => a.handle === id || a.did === id || `${a.handle.split(".")[0]}@example.com` === id,
      );
      if (!account || account.password !== body.password || account.passwordRevoked)
        return xrpcError(401, "AuthenticationRequired", "Invalid identifier or password");
      return json(sessionJson(openSession(account.did)));
    }
    if (request.method === "POST" && nsid === "com.atproto.server.refreshSession") {
      const bearer = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
      const session = sessions.find((s) => s.refreshJwt === bearer);
      if (!session) return xrpcError(400, "InvalidToken", "Token could not be verified");
      // A real PDS answers a reused refresh token again within a grace period; the fake keeps none.
      if (session.revoked || session.rotated) return xrpcError(400, "ExpiredToken", "Token has been revoked");
      if (session.refreshExpiresAt <= now()) return xrpcError(400, "ExpiredToken", "Token has expired");
      session.rotated = true;
      return json(sessionJson(openSession(session.did)));
    }
    if (request.method === "GET" && nsid === "com.atproto.identity.resolveHandle") {
      const account = fake.accounts.find((a) => a.handle === q.get("handle"));
      return account
        ? json({ did: account.did })
        : xrpcError(400, "HandleNotFound", "Unable to resolve handle");
    }
    if (request.method === "GET" && nsid === "com.atproto.repo.getRecord") {
      const found = fake.records.find(
        (r) =>
          (r.did === q.get("repo") || handleOf(r.did) === q.get("repo")) &&
          q.get("collection") === "app.bsky.feed.post" &&
          r.rkey === q.get("rkey"),
      );
      return found
        ? json({ uri: found.uri, cid: found.cid, value: found.record })
        : xrpcError(
            400,
            "RecordNotFound",
            `Could not locate record: at://${q.get("repo")}/${q.get("collection")}/${q.get("rkey")}`,
          );
    }
    const auth = authenticate(request);
    if (auth instanceof Response) return auth;
    if (request.method === "GET" && nsid === "app.bsky.feed.getPosts") {
      // The PDS proxies this AppView method; posts it does not know are left out, not errors.
      const uris = q.getAll("uris");
      if (uris.length === 0) return invalid('Error: Params must have the property "uris"');
      if (uris.length > 25) return invalid("Error: uris must not have more than 25 elements");
      const posts = uris.flatMap((uri) => {
        const r = fake.records.find((x) => x.uri === uri);
        if (!r) return [];
        const c = r.counts ?? {};
        const author = { did: r.did, handle: handleOf(r.did) ?? "handle.invalid" };
        return [
          {
            uri: r.uri,
            cid: r.cid,
            author,
            record: r.record,
            likeCount: c.likes ?? 0,
            repostCount: c.reposts ?? 0,
            replyCount: c.replies ?? 0,
            quoteCount: c.quotes ?? 0,
            bookmarkCount: c.bookmarks ?? 0,
            indexedAt: new Date(now()).toISOString(),
          },
        ];
      });
      return json({ posts });
    }
    if (request.method === "POST" && nsid === "com.atproto.repo.uploadBlob") {
      const bytes = new Uint8Array(await request.arrayBuffer());
      const mimeType = request.headers.get("content-type") ?? "application/octet-stream";
      if (bytes.length === 0) return invalid("Blob is empty");
      const blob = { cid: cid(bytes, 0x55), did: auth.did, mimeType, size: bytes.length };
      fake.blobs.push(blob);
      return json({ blob: { $type: "blob", ref: { $link: blob.cid }, mimeType, size: blob.size } });
    }
    if (request.method === "POST" && nsid === "com.atproto.repo.createRecord") {
      const body = await readBody(request);
      if (body.repo !== auth.did && body.repo !== handleOf(auth.did))
        return invalid("Input/repo must be the authenticated account");
      if (body.collection !== "app.bsky.feed.post")
        return invalid(`Unsupported collection: ${body.collection}`);
      const problem = validatePost(body.record, auth.did);
      if (problem) return invalid(`Invalid app.bsky.feed.post record: ${problem}`);
      // A key the client chose must be a TID for this collection; a key in use fails as the PDS's
      // repo write does (@atproto/pds 0.5: 500 InternalServerError, nothing written).
      if (body.rkey !== undefined && (typeof body.rkey !== "string" || !TID.test(body.rkey)))
        return invalid(
          `Invalid record key for app.bsky.feed.post: Invalid TID string (got ${JSON.stringify(body.rkey)}) at $`,
        );
      if (body.rkey !== undefined && fake.records.some((r) => r.did === auth.did && r.rkey === body.rkey))
        return xrpcError(500, "InternalServerError", "Internal Server Error");
      const rkey = body.rkey ?? tid();
      const stored: FakeRecord = {
        uri: `at://${auth.did}/app.bsky.feed.post/${rkey}`,
        cid: cid(JSON.stringify(body.record), 0x71),
        did: auth.did,
        rkey,
        record: body.record,
      };
      fake.records.push(stored);
      if (fake.hangAfterReceive) return never();
      return json({
        uri: stored.uri,
        cid: stored.cid,
        commit: { cid: cid(stored.cid, 0x71), rev: rkey },
        validationStatus: "valid",
      });
    }
    if (request.method === "POST" && nsid === "com.atproto.repo.putRecord") {
      // Writes a record under a key, replacing what was there (another client editing a post).
      const body = await readBody(request);
      if (body.repo !== auth.did && body.repo !== handleOf(auth.did))
        return invalid("Input/repo must be the authenticated account");
      if (body.collection !== "app.bsky.feed.post")
        return invalid(`Unsupported collection: ${body.collection}`);
      if (typeof body.rkey !== "string" || !TID.test(body.rkey))
        return invalid(
          `Invalid record key for app.bsky.feed.post: Invalid TID string (got ${JSON.stringify(body.rkey)}) at $`,
        );
      const problem = validatePost(body.record, auth.did);
      if (problem) return invalid(`Invalid app.bsky.feed.post record: ${problem}`);
      const stored: FakeRecord = {
        uri: `at://${auth.did}/app.bsky.feed.post/${body.rkey}`,
        cid: cid(JSON.stringify(body.record), 0x71),
        did: auth.did,
        rkey: body.rkey,
        record: body.record,
      };
      fake.records = [...fake.records.filter((r) => r.uri !== stored.uri), stored];
      return json({ uri: stored.uri, cid: stored.cid, validationStatus: "valid" });
    }
    return xrpcError(501, "MethodNotImplemented", `Method Not Implemented: ${nsid}`);
  }

  const handleOf = (did: string) => fake.accounts.find((a) => a.did === did)?.handle;

  /** The lexicon checks the PDS makes on a post (null when valid). */
  function validatePost(record: any, did: string): string | null {
    if (!record || record.$type !== "app.bsky.feed.post") return "Record/$type must be app.bsky.feed.post";
    if (typeof record.text !== "string") return 'Missing required key "text" at $.record';
    const textBytes = new TextEncoder().encode(record.text).length;
    if (textBytes > 3000) return `string too big (maximum 3000, got ${textBytes}) at $.record.text`;
    if (graphemes(record.text) > 300)
      return `grapheme too big (maximum 300, got ${graphemes(record.text)}) at $.record.text`;
    if (
      typeof record.createdAt !== "string" ||
      Number.isNaN(Date.parse(record.createdAt)) ||
      !/^\d{4}-\d\d-\d\dT/.test(record.createdAt)
    )
      return `Invalid datetime (got ${JSON.stringify(record.createdAt)}) at $.record.createdAt`;
    for (const [i, f] of (record.facets ?? []).entries()) {
      const { byteStart, byteEnd } = f?.index ?? {};
      if (
        !Number.isInteger(byteStart) ||
        !Number.isInteger(byteEnd) ||
        byteStart < 0 ||
        byteEnd < byteStart ||
        byteEnd > textBytes
      )
        return `facet index out of range at $.record.facets[${i}].index`;
      if (!Array.isArray(f.features) || f.features.length === 0)
        return `Missing required key "features" at $.record.facets[${i}]`;
    }
    if (record.langs !== undefined && (!Array.isArray(record.langs) || record.langs.length > 3))
      return `array too big (maximum 3, got ${record.langs.length}) at $.record.langs`;
    if (
      record.labels !== undefined &&
      (record.labels.$type !== "com.atproto.label.defs#selfLabels" || !Array.isArray(record.labels.values))
    )
      return "Invalid label union at $.record.labels";
    if (record.reply !== undefined) {
      for (const which of ["root", "parent"] as const) {
        const ref = record.reply[which];
        // Stricter than a PDS (which leaves this to the AppView): catches adapters that chain replies
        // wrongly.
        if (!fake.records.some((r) => r.uri === ref?.uri && r.cid === ref?.cid))
          return `reply ${which} is not an existing post at $.record.reply.${which}`;
      }
    }
    const embed = record.embed;
    const blobOk = (blob: any, mime: (m: string) => boolean) =>
      blob?.$type === "blob" &&
      fake.blobs.some((b) => b.cid === blob.ref?.$link && b.did === did) &&
      mime(blob.mimeType);
    if (embed?.$type === "app.bsky.embed.images") {
      if (!Array.isArray(embed.images) || embed.images.length > 4)
        return `array too big (maximum 4, got ${embed.images?.length}) at $.record.embed.images`;
      for (const [i, image] of embed.images.entries()) {
        if (!blobOk(image.image, (m) => m.startsWith("image/")))
          return `Invalid blob (not an uploaded image) at $.record.embed.images[${i}].image`;
        if (typeof image.alt !== "string") return `Missing required key "alt" at $.record.embed.images[${i}]`;
        const ar = image.aspectRatio;
        if (
          ar !== undefined &&
          !(Number.isInteger(ar.width) && ar.width > 0 && Number.isInteger(ar.height) && ar.height > 0)
        )
          return `Invalid aspectRatio at $.record.embed.images[${i}].aspectRatio`;
      }
    } else if (embed?.$type === "app.bsky.embed.video") {
      if (!blobOk(embed.video, (m) => m === "video/mp4"))
        return "Invalid blob (not an uploaded video/mp4) at $.record.embed.video";
    } else if (embed !== undefined) {
      return `Unsupported embed $type ${embed?.$type} at $.record.embed`;
    }
    return null;
  }

  const server = serveFake({
    controls: fake,
    failures,
    route,
    defaultFailure: (status) => {
      if (status === 429) {
        const reset = String(Math.ceil(now() / 1000) + 60);
        return {
          body: { error: "RateLimitExceeded", message: "Rate Limit Exceeded" },
          headers: {
            "ratelimit-limit": "5000",
            "ratelimit-remaining": "0",
            "ratelimit-reset": reset,
            "ratelimit-policy": "5000;w=3600",
          },
        };
      }
      if (status === 401)
        return { body: { error: "AuthenticationRequired", message: "Authentication Required" } };
      if (status === 400) return { body: { error: "InvalidRequest", message: "Invalid request" } };
      if (status === 502) return { body: { error: "UpstreamFailure", message: "Upstream Failure" } };
      if (status === 503) return { body: { error: "NotEnoughResources", message: "Service Unavailable" } };
      return { body: { error: "InternalServerError", message: "Internal Server Error" } };
    },
  });
  fake.origin = server.origin;
  fake.stop = server.stop;
  return fake;
}
