// A faithful local fake of one Mastodon instance (providers.md §3, §14): app registration, OAuth code
// flow with PKCE, verify_credentials, /api/v2/instance, media 202 → 206 → 200, statuses with
// Idempotency-Key, 401/422/429 bodies and X-RateLimit-* headers (reset as ISO-8601 with microseconds).
import { createHash } from "node:crypto";
import {
  json,
  never,
  graphemes,
  newControls,
  readBody,
  serveFake,
  token,
  type FailSpec,
  type FakeControls,
} from "./shared.ts";

/** A status the fake stored. */
export interface FakeStatus {
  id: string;
  url: string;
  uri: string;
  text: string;
  mediaIds: string[];
  inReplyToId: string | null;
  visibility: string;
  language: string | null;
  idempotencyKey: string | null;
  /** What readers did with it (tests set these; the status JSON reports them). */
  counts?: { replies?: number; reblogs?: number; favourites?: number; quotes?: number };
}

/** An uploaded media attachment; `pollsLeft` GETs answer 206 before it is processed. */
export interface FakeMedia {
  id: string;
  type: string;
  contentType: string;
  size: number;
  description: string | null;
  pollsLeft: number;
  attached: boolean;
}

/** Instance settings of the fake. */
export interface MastodonFakeOptions {
  maxCharacters?: number;
  maxMediaAttachments?: number;
  imageSizeLimit?: number;
  /** GETs of a new media that answer 206 before it is processed (0: the upload answers 200 at once). */
  mediaProcessingPolls?: number;
  /** false: `/api/v2/instance` is 404, like a pre-4.0 server. */
  instanceV2?: boolean;
}

/** The running fake: its origin, what it stored, and its switches. */
export interface MastodonFake extends FakeControls {
  origin: string;
  stop(): Promise<void>;
  account: { id: string; username: string; acct: string; display_name: string; avatar: string; url: string };
  apps: { clientId: string; clientSecret: string; redirectUris: string[]; scopes: string }[];
  statuses: FakeStatus[];
  media: FakeMedia[];
  /** Media processing polls for uploads from now on. */
  mediaProcessingPolls: number;
  /** Every access token answers 401 "The access token is invalid" from now on. */
  revokeTokens(): void;
  /** An access token for the account without the OAuth dance. */
  issueToken(): string;
}

const RATE_LIMIT = 300;

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startMastodonFake(options: MastodonFakeOptions = {}): Promise<MastodonFake> {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const tokens = new Map<string, { revoked: boolean; scopes: string }>();
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; challenge: string | null; scopes: string }
  >();
  const idempotency = new Map<string, string>();
  let nextId = 110_000_000_000_000_000n;
  let served = 0;
  const id = () => String(++nextId);

  const fake: MastodonFake = {
    ...newControls(failures),
    account: { id: "109", username: "alice", acct: "alice", display_name: "Alice", avatar: "", url: "" },
    apps: [],
    statuses: [],
    media: [],
    mediaProcessingPolls: options.mediaProcessingPolls ?? 2,
    revokeTokens: () => tokens.forEach((t) => (t.revoked = true)),
    issueToken: () => {
      const value = token("tok_");
      tokens.set(value, { revoked: false, scopes: "read write" });
      return value;
    },
  };

  const rateHeaders = (remaining: number, resetMs: number) => ({
    "x-ratelimit-limit": String(RATE_LIMIT),
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-reset": new Date(resetMs).toISOString().replace("Z", "123Z"), // microseconds, as Rails prints them
  });
  const error = (status: number, message: string, extra: Record<string, string> = {}) =>
    json({ error: message, ...extra }, status);
  const ok = (body: unknown, status = 200) =>
    json(body, status, rateHeaders(Math.max(0, RATE_LIMIT - ++served), Date.now() + 300_000));

  const authorized = (request: Request): boolean => {
    const value = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const entry = value ? tokens.get(value) : undefined;
    return entry !== undefined && !entry.revoked;
  };
  const mediaJson = (m: FakeMedia) => {
    const processed = m.pollsLeft <= 0;
    const file = `${fake.origin}/system/media_attachments/files/${m.id}/original/file`;
    return {
      id: m.id,
      type: m.type,
      url: processed ? file : null,
      preview_url: `${fake.origin}/system/media_attachments/files/${m.id}/small/file`,
      remote_url: null,
      meta: {},
      description: m.description,
      blurhash: null,
    };
  };
  const statusJson = (s: FakeStatus) => ({
    id: s.id,
    created_at: new Date().toISOString(),
    in_reply_to_id: s.inReplyToId,
    in_reply_to_account_id: s.inReplyToId ? fake.account.id : null,
    sensitive: false,
    spoiler_text: "",
    visibility: s.visibility,
    language: s.language,
    uri: s.uri,
    url: s.url,
    replies_count: s.counts?.replies ?? 0,
    reblogs_count: s.counts?.reblogs ?? 0,
    favourites_count: s.counts?.favourites ?? 0,
    quotes_count: s.counts?.quotes ?? 0,
    content: `<p>${Bun.escapeHTML(s.text)}</p>`,
    media_attachments: s.mediaIds.map((m) => mediaJson(fake.media.find((x) => x.id === m)!)),
    account: fake.account,
  });

  async function route(request: Request, url: URL): Promise<Response> {
    const { pathname } = url;
    const method = request.method;
    if (method === "POST" && pathname === "/api/v1/apps") {
      const body = await readBody(request);
      if (!body.client_name) return error(422, "Validation failed: Application name can't be blank");
      const redirectUris = (
        Array.isArray(body.redirect_uris) ? body.redirect_uris : String(body.redirect_uris ?? "").split(/\s+/)
      ).filter(Boolean);
      if (redirectUris.length === 0) return error(422, "Validation failed: Redirect URI can't be blank");
      const app = {
        clientId: token("cid_"),
        clientSecret: token("cs_"),
        redirectUris,
        scopes: String(body.scopes ?? "read"),
      };
      fake.apps.push(app);
      return ok({
        id: id(),
        name: body.client_name,
        website: body.website ?? null,
        scopes: app.scopes.split(" "),
        redirect_uri: redirectUris.join("\n"),
        redirect_uris: redirectUris,
        client_id: app.clientId,
        client_secret: app.clientSecret,
        client_secret_expires_at: 0,
      });
    }
    if (method === "GET" && pathname === "/oauth/authorize") {
      // The signed-in user approves at once; a browser would follow this redirect.
      const q = url.searchParams;
      const app = fake.apps.find((a) => a.clientId === q.get("client_id"));
      if (!app || !app.redirectUris.includes(q.get("redirect_uri") ?? ""))
        return new Response("The redirect uri included is not valid.", { status: 400 });
      if (q.get("response_type") !== "code")
        return new Response("The authorization server does not support this response type.", { status: 400 });
      const challenge = q.get("code_challenge");
      if (challenge && q.get("code_challenge_method") !== "S256")
        return new Response("Code challenge method must be S256.", { status: 400 });
      const code = token("code_");
      codes.set(code, {
        clientId: app.clientId,
        redirectUri: q.get("redirect_uri")!,
        challenge,
        scopes: q.get("scope") ?? "read",
      });
      const target = new URL(q.get("redirect_uri")!);
      target.searchParams.set("code", code);
      if (q.get("state")) target.searchParams.set("state", q.get("state")!);
      return new Response(null, { status: 302, headers: { location: String(target) } });
    }
    if (method === "POST" && pathname === "/oauth/token") {
      const body = await readBody(request);
      const app = fake.apps.find(
        (a) => a.clientId === body.client_id && a.clientSecret === body.client_secret,
      );
      if (!app)
        return json(
          {
            error: "invalid_client",
            error_description:
              "Client authentication failed due to unknown client, no client authentication included, or " +
              "unsupported authentication method.",
          },
          401,
        );
      if (body.grant_type === "client_credentials") {
        // An app token (Doorkeeper's client credentials grant): proves the app is still registered.
        const access = token("app_");
        tokens.set(access, { revoked: false, scopes: String(body.scope ?? "read") });
        return ok({
          access_token: access,
          token_type: "Bearer",
          scope: String(body.scope ?? "read"),
          created_at: Math.floor(Date.now() / 1000),
        });
      }
      const grant = codes.get(String(body.code));
      const verifierOk =
        !grant?.challenge ||
        createHash("sha256")
          .update(String(body.code_verifier ?? ""))
          .digest("base64url") === grant.challenge;
      if (
        body.grant_type !== "authorization_code" ||
        !grant ||
        grant.clientId !== app.clientId ||
        grant.redirectUri !== body.redirect_uri ||
        !verifierOk
      ) {
        return json(
          {
            error: "invalid_grant",
            error_description:
              "The provided authorization grant is invalid, expired, revoked, does not match the " +
              "redirection URI used in the authorization request, or was issued to another client.",
          },
          400,
        );
      }
      codes.delete(String(body.code));
      const access = token("tok_");
      tokens.set(access, { revoked: false, scopes: grant.scopes });
      return ok({
        access_token: access,
        token_type: "Bearer",
        scope: grant.scopes,
        created_at: Math.floor(Date.now() / 1000),
      });
    }
    if (method === "GET" && pathname === "/api/v2/instance") {
      if (options.instanceV2 === false) return error(404, "Record not found");
      return ok({
        domain: url.host,
        title: "Fake Mastodon",
        version: "4.3.0",
        configuration: {
          urls: { streaming: `ws://${url.host}` },
          statuses: {
            max_characters: options.maxCharacters ?? 500,
            max_media_attachments: options.maxMediaAttachments ?? 4,
            characters_reserved_per_url: 23,
          },
          media_attachments: {
            supported_mime_types: ["image/jpeg", "image/png", "image/gif", "image/webp", "video/mp4"],
            image_size_limit: options.imageSizeLimit ?? 16_777_216,
            image_matrix_limit: 33_177_600,
            video_size_limit: 103_809_024,
            video_frame_rate_limit: 120,
            video_matrix_limit: 8_294_400,
            description_limit: 1500,
          },
        },
      });
    }
    if (!authorized(request)) return error(401, "The access token is invalid");
    if (method === "GET" && pathname === "/api/v1/accounts/verify_credentials")
      return ok({ ...fake.account, source: { privacy: "public", language: null } });
    if (method === "POST" && pathname === "/api/v2/media") {
      const body = await readBody(request);
      const file = body.file;
      if (!(file instanceof Blob)) return error(400, "param is missing or the value is empty: file");
      const type = file.type.split(";")[0]!;
      const kind = type.startsWith("image/")
        ? "image"
        : type.startsWith("video/")
          ? "video"
          : type.startsWith("audio/")
            ? "audio"
            : null;
      if (!kind) return error(422, "Validation failed: File content type is invalid, File is invalid");
      const media: FakeMedia = {
        id: id(),
        type: kind,
        contentType: type,
        size: file.size,
        description: typeof body.description === "string" ? body.description : null,
        pollsLeft: fake.mediaProcessingPolls,
        attached: false,
      };
      fake.media.push(media);
      return ok(mediaJson(media), media.pollsLeft > 0 ? 202 : 200);
    }
    const mediaMatch = /^\/api\/v1\/media\/([^/]+)$/.exec(pathname);
    if (method === "GET" && mediaMatch) {
      const media = fake.media.find((m) => m.id === mediaMatch[1]);
      if (!media) return error(404, "Record not found");
      if (media.pollsLeft > 0) {
        media.pollsLeft--;
        return ok(mediaJson({ ...media, pollsLeft: 1 }), 206);
      }
      return ok(mediaJson(media));
    }
    if (method === "POST" && pathname === "/api/v1/statuses") return createStatus(request);
    const statusMatch = /^\/api\/v1\/statuses\/([^/]+)$/.exec(pathname);
    if (method === "GET" && statusMatch) {
      const status = fake.statuses.find((s) => s.id === statusMatch[1]);
      return status ? ok(statusJson(status)) : error(404, "Record not found");
    }
    return error(404, "Not Found");
  }

  async function createStatus(request: Request): Promise<Response> {
    const key = request.headers.get("idempotency-key");
    const existing = key ? idempotency.get(key) : undefined;
    if (existing) return ok(statusJson(fake.statuses.find((s) => s.id === existing)!)); // same key ⇒ same status
    const body = await readBody(request);
    const text = typeof body.status === "string" ? body.status : "";
    const mediaIds: string[] = (Array.isArray(body.media_ids) ? body.media_ids : []).map(String);
    const media = mediaIds.map((m) => fake.media.find((x) => x.id === m));
    if (text.trim() === "" && mediaIds.length === 0)
      return error(422, "Validation failed: Text can't be blank");
    const max = options.maxCharacters ?? 500;
    if (graphemes(text.replace(/https?:\/\/\S+/g, "x".repeat(23))) > max)
      return error(422, `Validation failed: Text character limit of ${max} exceeded`);
    if (media.some((m) => !m || m.attached))
      return error(422, "Validation failed: Media attachments are invalid");
    if (media.length > (options.maxMediaAttachments ?? 4))
      return error(422, `Cannot attach more than ${options.maxMediaAttachments ?? 4} files`);
    if (media.some((m) => m!.pollsLeft > 0))
      return error(422, "Cannot attach files that have not finished processing. Try again in a moment!");
    if (media.some((m) => m!.type !== "image") && media.length > 1)
      return error(422, "Cannot attach a video to a post that already contains images");
    const inReplyToId = body.in_reply_to_id ? String(body.in_reply_to_id) : null;
    if (inReplyToId && !fake.statuses.some((s) => s.id === inReplyToId))
      return error(404, "Record not found");
    const statusId = id();
    const status: FakeStatus = {
      id: statusId,
      url: `${fake.origin}/@${fake.account.username}/${statusId}`,
      uri: `${fake.origin}/users/${fake.account.username}/statuses/${statusId}`,
      text,
      mediaIds,
      inReplyToId,
      visibility: String(body.visibility ?? "public"),
      language: typeof body.language === "string" ? body.language : null,
      idempotencyKey: key,
    };
    fake.statuses.push(status);
    for (const m of media) m!.attached = true;
    if (key) idempotency.set(key, statusId);
    if (fake.hangAfterReceive) return never();
    return ok(statusJson(status));
  }

  const server = serveFake({
    controls: fake,
    failures,
    route,
    defaultFailure: (status) => {
      if (status === 429)
        return { body: { error: "Too many requests" }, headers: rateHeaders(0, Date.now() + 60_000) };
      if (status === 401) return { body: { error: "The access token is invalid" } };
      if (status === 422) return { body: { error: "Validation failed: Text can't be blank" } };
      if (status === 503) return { body: { error: "Service Unavailable" } };
      return {
        body: { error: status >= 500 ? "We're sorry, but something went wrong on our end." : "Bad request" },
      };
    },
  });
  fake.origin = server.origin;
  fake.stop = server.stop;
  fake.account.url = `${server.origin}/@alice`;
  fake.account.avatar = `${server.origin}/avatars/original/missing.png`;
  return fake;
}
