// A faithful local fake of YouTube (providers.md §9.6, §14): Google's OAuth endpoints (the consent
// page with PKCE S256 checked at the code exchange, offline access, refresh, `invalid_grant` for dead
// grants), `channels?mine=true`, resumable upload sessions (Location, chunks checked against
// Content-Range and the 256 KiB unit, 308 + Range while incomplete, the `bytes */N` probe, 201 with the
// video resource, 404/410 for an expired session), processing over N status reads, the project's
// videos.insert and unit quotas → 403 quotaExceeded, the channel's upload cap → 400
// uploadLimitExceeded, videos.list with `statistics` (counts as strings; likeCount left out when the
// owner hides likes, commentCount when comments are off; at most 50 ids), and every error in Google's
// envelope.
import { createHash, randomBytes } from "node:crypto";
import {
  json,
  never,
  newControls,
  readBody,
  serveFake,
  behindCutProxy,
  cutProxyFor,
  type CutProxy,
  token,
  type CutRequest,
  type FailSpec,
  type FakeControls,
} from "./shared.ts";

/** The channel of the Google account that signs in (null: an account without a channel). */
export interface FakeChannel {
  id: string;
  title: string;
  customUrl: string;
  thumbnail: string;
}

/** How a video's processing ends. */
export type VideoEnd = "processed" | "failed" | "rejected";

/** A video the fake holds: created when its session received the last byte. */
export interface FakeVideo {
  id: string;
  channelId: string;
  title: string;
  description: string;
  tags: string[] | null;
  categoryId: string | null;
  privacyStatus: string;
  madeForKids: boolean | null;
  notifySubscribers: boolean;
  contentType: string;
  bytes: Uint8Array;
  uploadStatus: "uploaded" | "processed" | "failed" | "rejected";
  /** Status reads still answered "processing". */
  pollsLeft: number;
  end: VideoEnd;
  /** What viewers did with it (tests set these; `statistics` has them as strings, missing ones "0"). */
  counts?: { views?: number; likes?: number; favorites?: number; comments?: number };
  /** The owner hides the like count: `statistics` has no likeCount. */
  likesHidden?: boolean;
  /** Comments are turned off: `statistics` has no commentCount. */
  commentsDisabled?: boolean;
  /** When its upload completed (epoch ms): its uploads-playlist item's `snippet.publishedAt`. */
  uploadedAt?: number;
}

/** A top-level comment (comment thread) on a video. */
export interface FakeCommentThread {
  id: string;
  videoId: string;
  channelId: string;
  authorChannelId: string;
  textOriginal: string;
  publishedAt: number;
}

/** A resumable upload session. */
export interface FakeSession {
  id: string;
  uri: string;
  channelId: string;
  total: number;
  contentType: string;
  snippet: Record<string, any>;
  status: Record<string, any>;
  notifySubscribers: boolean;
  /** The bytes held so far (the first `held` of `buffer`). */
  buffer: Uint8Array;
  held: number;
  /** Each chunk PUT as received: its Content-Range start, length, and what was answered. */
  chunks: { start: number; length: number; answered: number | "cut" }[];
  video: FakeVideo | null;
  /** Set when the session expired: every PUT answers this status. */
  expired: 404 | 410 | null;
}

/** Settings of the fake. */
export interface YouTubeFakeOptions {
  clientId?: string;
  clientSecret?: string;
  /** Status reads a new video answers "processing" before it ends (default 2). */
  processingPolls?: number;
  /** Redirect URIs the OAuth client has registered; null (default) accepts any. */
  redirectUris?: string[] | null;
  /** Google re-issues a refresh token on refresh (the old one dies); default false, as Google usually does. */
  reissueRefreshTokens?: boolean;
  /** The project is not audited: every upload is locked private, whatever was asked. */
  unverifiedProject?: boolean;
  /** Serve through the cut proxy (test/fakes/shared.ts), so a chunk's connection can be reset mid-body. */
  cuttable?: boolean;
  now?: () => number;
}

/** The running fake: its origin, what it stored, and its switches. */
export interface YouTubeFake extends FakeControls {
  origin: string;
  stop(): Promise<void>;
  clientId: string;
  clientSecret: string;
  channel: FakeChannel | null;
  /** What the user leaves ticked on the consent page (null: everything asked). */
  consentScopes: string[] | null;
  /** Consent page requests (query parameters). */
  authorizations: Record<string, string>[];
  /** Token endpoint requests (form fields). */
  tokenRequests: Record<string, string>[];
  sessions: FakeSession[];
  videos: FakeVideo[];
  /** Comment threads made through `commentThreads.insert`, oldest first. */
  commentThreads: FakeCommentThread[];
  /** The ids of every videos.list call that asked for `statistics`. */
  statisticsReads: string[][];
  /** videos.insert calls left today for the project (the 100-a-day bucket). */
  quota: { insertsLeft: number; unitsLeft: number };
  /** Uploads the channel may still make today (YouTube's own per-channel cap). */
  channelUploadsLeft: number;
  processingPolls: number;
  /** The next video created ends this way instead of processed. */
  nextVideoEnds(end: VideoEnd): void;
  /** The next chunk PUT keeps only its first `keep` bytes, then the answer is cut (hangs) or a 5xx. */
  cutNextChunk(input: { keep: number; then: "hang" | 500 | 503 }): void;
  /**
   * The connection of the next chunk PUT is reset once `keepBytes` of its body arrived (needs
   * `cuttable`): YouTube keeps the bytes it received and reports them in the probe's `Range`.
   */
  resetNextChunk(input: { keepBytes: number }): void;
  /** Every session expires: its PUTs answer `status`. */
  expireSessions(status?: 404 | 410): void;
  /** Every access token issued so far is expired from now on (401 authError). */
  expireTokens(): void;
  /** The user revoked Herald: access and refresh tokens die (invalid_grant). */
  revokeGrants(): void;
  /** An access token for the account with the given scopes (default: upload and readonly). */
  issueToken(scopes?: string[]): string;
}

const GOOGLE_SCOPE = "https://www.googleapis.com/auth/";
/** The scopes the consent page knows. */
const KNOWN_SCOPES = new Set(
  ["youtube.upload", "youtube.readonly", "youtube", "youtube.force-ssl", "yt-analytics.readonly"].map(
    (s) => GOOGLE_SCOPE + s,
  ),
);
const UPLOAD_SCOPES = ["youtube.upload", "youtube", "youtube.force-ssl"].map((s) => GOOGLE_SCOPE + s);
const READ_SCOPES = ["youtube.readonly", "youtube", "youtube.force-ssl"].map((s) => GOOGLE_SCOPE + s);
const DEFAULT_SCOPES = [`${GOOGLE_SCOPE}youtube.upload`, `${GOOGLE_SCOPE}youtube.readonly`];
const ACCESS_TTL_S = 3599;
const CODE_TTL_MS = 10 * 60_000;
const CHUNK_UNIT = 256 * 1024;
const CATEGORIES = new Set([
  "1",
  "2",
  "10",
  "15",
  "17",
  "19",
  "20",
  "22",
  "23",
  "24",
  "25",
  "26",
  "27",
  "28",
]);

/** Google's error envelope `{"error":{code,message,errors:[{message,domain,reason}],status}}`. */
export function googleErrorBody(status: number, reason: string, message: string, domain = "global") {
  const statusName: Record<number, string> = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
  };
  return {
    error: {
      code: status,
      message,
      errors: [{ message, domain, reason }],
      ...(statusName[status] ? { status: statusName[status] } : {}),
    },
  };
}

/** A response with Google's error envelope. */
export function googleError(status: number, reason: string, message: string, domain = "global"): Response {
  return json(googleErrorBody(status, reason, message, domain), status);
}

/** A channel's uploads playlist id, as YouTube names it (UC… → UU…). */
export function uploadsPlaylist(channelId: string): string {
  return `UU${channelId.slice(2)}`;
}

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startYouTubeFake(options: YouTubeFakeOptions = {}): Promise<YouTubeFake> {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const now = options.now ?? (() => Date.now());
  const accessTokens = new Map<string, { scopes: string[]; expiresAt: number; revoked: boolean }>();
  const refreshTokens = new Map<string, { scopes: string[]; revoked: boolean }>();
  const codes = new Map<
    string,
    { redirectUri: string; scopes: string[]; challenge: string | null; offline: boolean; expiresAt: number }
  >();
  let nextEnd: VideoEnd | null = null;
  let cut: { keep: number; then: "hang" | 500 | 503 } | null = null;
  let cuts: CutProxy | null = null;

  const fake: YouTubeFake = {
    ...newControls(failures),
    clientId: options.clientId ?? "1234-herald.apps.googleusercontent.com",
    clientSecret: options.clientSecret ?? "GOCSPX-herald-secret",
    channel: {
      id: "UCherald0000000000000001",
      title: "Herald Studio",
      customUrl: "@heraldstudio",
      thumbnail: "https://yt3.ggpht.example/herald=s88",
    },
    consentScopes: null,
    authorizations: [],
    tokenRequests: [],
    sessions: [],
    videos: [],
    commentThreads: [],
    statisticsReads: [],
    quota: { insertsLeft: 100, unitsLeft: 10_000 },
    channelUploadsLeft: Number.POSITIVE_INFINITY,
    processingPolls: options.processingPolls ?? 2,
    nextVideoEnds: (end) => void (nextEnd = end),
    cutNextChunk: (spec) => void (cut = spec),
    resetNextChunk: ({ keepBytes }) => {
      cutProxyFor(cuts, "resetNextChunk").cutNext({
        keepBytes,
        match: ({ method, headers }) =>
          method === "PUT" && /^bytes \d+-/.test(headers["content-range"] ?? ""),
        onCut: keepReceivedPrefix,
      });
    },
    expireSessions: (status = 404) => fake.sessions.forEach((s) => (s.expired = status)),
    expireTokens: () => accessTokens.forEach((t) => (t.expiresAt = Math.min(t.expiresAt, now() - 1))),
    revokeGrants: () => {
      accessTokens.forEach((t) => (t.revoked = true));
      refreshTokens.forEach((r) => (r.revoked = true));
    },
    issueToken: (scopes = DEFAULT_SCOPES) => {
      const value = token("ya29.");
      accessTokens.set(value, { scopes, expiresAt: now() + ACCESS_TTL_S * 1000, revoked: false });
      return value;
    },
  };

  const unauthenticated = () =>
    googleError(
      401,
      "authError",
      "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or " +
        "other valid authentication credential.",
    );
  const insufficient = () =>
    googleError(403, "insufficientPermissions", "Request had insufficient authentication scopes.");
  const oauthError = (status: number, error: string, description: string) =>
    json({ error, error_description: description }, status);

  /** The caller's token entry, or the error to answer. */
  function caller(request: Request, needs: string[]): { scopes: string[] } | Response {
    const value = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const entry = value ? accessTokens.get(value) : undefined;
    if (!entry || entry.revoked || entry.expiresAt <= now()) return unauthenticated();
    if (!entry.scopes.some((s) => needs.includes(s))) return insufficient();
    return entry;
  }

  /** Spends `units` of the project's daily quota, or answers quotaExceeded. */
  function spend(units: number): Response | null {
    if (fake.quota.unitsLeft < units)
      return googleError(
        403,
        "quotaExceeded",
        "The request cannot be completed because you have exceeded your quota.",
        "youtube.quota",
      );
    fake.quota.unitsLeft -= units;
    return null;
  }

  async function route(request: Request, url: URL): Promise<Response> {
    const { pathname } = url;
    const method = request.method;
    if (method === "GET" && pathname === "/o/oauth2/v2/auth") return authorize(url);
    if (method === "POST" && pathname === "/token") return tokenEndpoint(request);
    if (pathname === "/upload/youtube/v3/videos") {
      if (method === "POST") return startSession(request, url);
      if (method === "PUT") return sessionPut(request, url);
    }
    if (method === "GET" && pathname === "/youtube/v3/channels") return channels(request, url);
    if (method === "GET" && pathname === "/youtube/v3/videos") return listVideos(request, url);
    if (method === "GET" && pathname === "/youtube/v3/playlistItems") return playlistItems(request, url);
    if (pathname === "/youtube/v3/commentThreads") {
      if (method === "POST") return insertCommentThread(request, url);
      if (method === "GET") return listCommentThreads(request, url);
    }
    return googleError(404, "notFound", `Not Found: ${method} ${pathname}`);
  }

  const FORCE_SSL = [`${GOOGLE_SCOPE}youtube.force-ssl`];

  /** A comment thread as the API returns it. */
  function threadJson(t: FakeCommentThread) {
    const snippet = {
      channelId: t.channelId,
      videoId: t.videoId,
      textDisplay: t.textOriginal,
      textOriginal: t.textOriginal,
      authorChannelId: { value: t.authorChannelId },
      publishedAt: new Date(t.publishedAt).toISOString(),
      updatedAt: new Date(t.publishedAt).toISOString(),
    };
    return {
      kind: "youtube#commentThread",
      etag: `t${t.id}`,
      id: t.id,
      snippet: {
        channelId: t.channelId,
        videoId: t.videoId,
        topLevelComment: { kind: "youtube#comment", id: t.id, snippet },
        canReply: true,
        totalReplyCount: 0,
        isPublic: true,
      },
    };
  }

  /**
   * `commentThreads.insert?part=snippet` (scope youtube.force-ssl only, 50 units): the errors the
   * reference lists for a missing channel or video id, empty or too long text (10,000), a video that
   * does not exist (404 videoNotFound) and comments turned off (403 commentsDisabled).
   */
  async function insertCommentThread(request: Request, url: URL): Promise<Response> {
    const auth = caller(request, FORCE_SSL);
    if (auth instanceof Response) return auth;
    if (url.searchParams.get("part") !== "snippet")
      return googleError(400, "unexpectedPart", "The request specifies an unexpected value for part.");
    const body = await readBody(request);
    const snippet = body.snippet ?? {};
    const text = snippet.topLevelComment?.snippet?.textOriginal;
    if (typeof snippet.videoId !== "string" || typeof snippet.channelId !== "string")
      return googleError(400, "channelOrVideoIdMissing", "The comment thread must be linked to a video.");
    if (typeof text !== "string" || text.trim() === "")
      return googleError(
        400,
        "commentTextRequired",
        "The comment resource must specify a value for textOriginal.",
      );
    if ([...text].length > 10_000)
      return googleError(400, "commentTextTooLong", "The comment resource contains too many characters.");
    const video = fake.videos.find((v) => v.id === snippet.videoId);
    if (!video) return googleError(404, "videoNotFound", "The video could not be found.");
    if (video.commentsDisabled)
      return googleError(403, "commentsDisabled", "The video has disabled comments.");
    const spent = spend(50);
    if (spent) return spent;
    const thread: FakeCommentThread = {
      id: `Ug${token("")}`.slice(0, 26),
      videoId: video.id,
      channelId: video.channelId,
      authorChannelId: fake.channel?.id ?? "",
      textOriginal: text,
      publishedAt: now(),
    };
    fake.commentThreads.push(thread);
    if (fake.hangAfterReceive) return never();
    return json(threadJson(thread));
  }

  /** `commentThreads.list?part=snippet&videoId=…`, newest first (read scopes, 1 unit). */
  function listCommentThreads(request: Request, url: URL): Response {
    const auth = caller(request, READ_SCOPES);
    if (auth instanceof Response) return auth;
    const videoId = url.searchParams.get("videoId");
    if (!videoId) return googleError(400, "missingRequiredParameter", "No filter selected.");
    const spent = spend(1);
    if (spent) return spent;
    const items = fake.commentThreads.filter((t) => t.videoId === videoId).toReversed();
    return json({
      kind: "youtube#commentThreadListResponse",
      pageInfo: { totalResults: items.length, resultsPerPage: 100 },
      items: items.map(threadJson),
    });
  }

  function authorize(url: URL): Response {
    const q = url.searchParams;
    fake.authorizations.push(Object.fromEntries(q));
    if (q.get("client_id") !== fake.clientId)
      return new Response("Error 401: invalid_client. The OAuth client was not found.", { status: 401 });
    const redirectUri = q.get("redirect_uri") ?? "";
    if (!redirectUri || (options.redirectUris && !options.redirectUris.includes(redirectUri)))
      return new Response("Error 400: redirect_uri_mismatch", { status: 400 });
    const scopes = (q.get("scope") ?? "").split(" ").filter(Boolean);
    if (q.get("response_type") !== "code" || scopes.length === 0 || scopes.some((s) => !KNOWN_SCOPES.has(s)))
      return new Response("Error 400: invalid_request (response_type or scope)", { status: 400 });
    const method = q.get("code_challenge_method");
    const challenge = q.get("code_challenge");
    if (challenge !== null && (method !== "S256" || !/^[A-Za-z0-9_-]{43,128}$/.test(challenge)))
      return new Response("Error 400: invalid_request (code_challenge)", { status: 400 });
    const granted = scopes.filter((s) => !fake.consentScopes || fake.consentScopes.includes(s));
    const back = new URL(redirectUri);
    const state = q.get("state");
    if (state) back.searchParams.set("state", state);
    if (granted.length === 0) {
      back.searchParams.set("error", "access_denied");
      return new Response(null, { status: 302, headers: { location: String(back) } });
    }
    const code = `4/${token("0A")}`;
    codes.set(code, {
      redirectUri,
      scopes: granted,
      challenge,
      offline: q.get("access_type") === "offline",
      expiresAt: now() + CODE_TTL_MS,
    });
    back.searchParams.set("code", code);
    back.searchParams.set("scope", granted.join(" "));
    return new Response(null, { status: 302, headers: { location: String(back) } });
  }

  async function tokenEndpoint(request: Request): Promise<Response> {
    if (!(request.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded"))
      return oauthError(400, "invalid_request", "Invalid content type");
    const form = Object.fromEntries(new URLSearchParams(await request.text()));
    fake.tokenRequests.push(form);
    if (form.client_id !== fake.clientId || form.client_secret !== fake.clientSecret)
      return oauthError(401, "invalid_client", "Unauthorized");
    if (form.grant_type === "authorization_code") {
      const grant = codes.get(form.code ?? "");
      codes.delete(form.code ?? ""); // single-use, even when the exchange fails
      if (!grant || grant.expiresAt <= now()) return oauthError(400, "invalid_grant", "Bad Request");
      if (grant.redirectUri !== form.redirect_uri)
        return oauthError(400, "redirect_uri_mismatch", "Bad Request");
      if (grant.challenge !== null) {
        const verifier = form.code_verifier ?? "";
        if (createHash("sha256").update(verifier).digest("base64url") !== grant.challenge)
          return oauthError(400, "invalid_grant", "Invalid code verifier.");
      }
      const refresh = grant.offline ? token("1//0g") : null;
      if (refresh) refreshTokens.set(refresh, { scopes: grant.scopes, revoked: false });
      return tokens(grant.scopes, refresh);
    }
    if (form.grant_type === "refresh_token") {
      const entry = refreshTokens.get(form.refresh_token ?? "");
      if (!entry || entry.revoked)
        return oauthError(400, "invalid_grant", "Token has been expired or revoked.");
      if (!options.reissueRefreshTokens) return tokens(entry.scopes, null);
      entry.revoked = true;
      const next = token("1//0g");
      refreshTokens.set(next, { scopes: entry.scopes, revoked: false });
      return tokens(entry.scopes, next);
    }
    return oauthError(400, "unsupported_grant_type", "Invalid grant_type");
  }

  function tokens(scopes: string[], refresh: string | null): Response {
    return json({
      access_token: fake.issueToken(scopes),
      expires_in: ACCESS_TTL_S,
      ...(refresh ? { refresh_token: refresh } : {}),
      scope: scopes.join(" "),
      token_type: "Bearer",
    });
  }

  function channels(request: Request, url: URL): Response {
    const auth = caller(request, READ_SCOPES);
    if (auth instanceof Response) return auth;
    if (url.searchParams.get("mine") !== "true" || !url.searchParams.get("part"))
      return googleError(400, "missingRequiredParameter", "No filter selected. Expected one of: mine, id");
    const spent = spend(1);
    if (spent) return spent;
    const channel = fake.channel;
    // A Google account without a channel: 200 and no items.
    if (!channel)
      return json({
        kind: "youtube#channelListResponse",
        etag: "e0",
        pageInfo: { totalResults: 0, resultsPerPage: 5 },
      });
    return json({
      kind: "youtube#channelListResponse",
      etag: "e1",
      pageInfo: { totalResults: 1, resultsPerPage: 5 },
      items: [
        {
          kind: "youtube#channel",
          etag: "c1",
          id: channel.id,
          snippet: {
            title: channel.title,
            description: "",
            customUrl: channel.customUrl,
            publishedAt: "2020-01-01T00:00:00Z",
            thumbnails: { default: { url: channel.thumbnail, width: 88, height: 88 } },
          },
          contentDetails: { relatedPlaylists: { likes: "LL", uploads: uploadsPlaylist(channel.id) } },
        },
      ],
    });
  }

  async function startSession(request: Request, url: URL): Promise<Response> {
    const auth = caller(request, UPLOAD_SCOPES);
    if (auth instanceof Response) return auth;
    const channel = fake.channel;
    if (!channel)
      return googleError(
        401,
        "youtubeSignupRequired",
        "The user has a Google account without a YouTube channel.",
        "youtube.header",
      );
    const q = url.searchParams;
    const parts = (q.get("part") ?? "").split(",");
    if (q.get("uploadType") !== "resumable" || !parts.includes("snippet") || !parts.includes("status"))
      return googleError(400, "badRequest", "uploadType=resumable and part=snippet,status are expected");
    const total = Number(request.headers.get("x-upload-content-length"));
    const contentType = request.headers.get("x-upload-content-type") ?? "";
    if (!Number.isInteger(total) || total <= 0)
      return googleError(400, "badRequest", "X-Upload-Content-Length must be the file's size");
    if (!contentType.startsWith("video/") && contentType !== "application/octet-stream")
      return googleError(400, "badContent", `Media type '${contentType}' is not supported.`);
    if (!(request.headers.get("content-type") ?? "").startsWith("application/json"))
      return googleError(400, "badRequest", "The metadata must be JSON");
    if (fake.quota.insertsLeft <= 0)
      return googleError(
        403,
        "quotaExceeded",
        "The request cannot be completed because you have exceeded your quota.",
        "youtube.quota",
      );
    if (fake.channelUploadsLeft <= 0)
      return googleError(
        400,
        "uploadLimitExceeded",
        "The user has exceeded the number of videos they may upload.",
        "youtube.video",
      );
    let body: Record<string, any>;
    try {
      body = (await request.json()) as Record<string, any>;
    } catch {
      return googleError(400, "parseError", "Parse Error");
    }
    const refused = metadataProblem(body);
    if (refused) return refused;
    fake.quota.insertsLeft -= 1;
    fake.channelUploadsLeft -= 1;
    const id = `xa${randomBytes(12).toString("hex")}`;
    const uri = `${fake.origin}/upload/youtube/v3/videos?uploadType=resumable&part=snippet%2Cstatus&upload_id=${id}`;
    fake.sessions.push({
      id,
      uri,
      channelId: channel.id,
      total,
      contentType,
      snippet: body.snippet,
      status: body.status ?? {},
      notifySubscribers: q.get("notifySubscribers") !== "false",
      buffer: new Uint8Array(total),
      held: 0,
      chunks: [],
      video: null,
      expired: null,
    });
    return new Response(null, { status: 200, headers: { location: uri, "x-guploader-uploadid": id } });
  }

  /** YouTube's metadata rules (400 with YouTube's reasons), or null when the metadata is fine. */
  function metadataProblem(body: Record<string, any>): Response | null {
    const snippet = body.snippet ?? {};
    const status = body.status ?? {};
    const title = snippet.title;
    if (typeof title !== "string" || title.trim() === "" || title.length > 100 || /[<>]/.test(title))
      return googleError(
        400,
        "invalidTitle",
        "The request metadata specifies an invalid video title.",
        "youtube.video",
      );
    const description = snippet.description ?? "";
    if (
      typeof description !== "string" ||
      Buffer.byteLength(description, "utf8") > 5000 ||
      /[<>]/.test(description)
    )
      return googleError(
        400,
        "invalidDescription",
        "The request metadata specifies an invalid video description.",
        "youtube.video",
      );
    if (snippet.tags !== undefined) {
      const tags: unknown[] = Array.isArray(snippet.tags) ? snippet.tags : [null];
      const length =
        tags.reduce<number>((n, t) => n + String(t).length + (String(t).includes(" ") ? 2 : 0), 0) +
        Math.max(0, tags.length - 1);
      if (tags.some((t) => typeof t !== "string" || /[<>]/.test(t)) || length > 500)
        return googleError(
          400,
          "invalidTags",
          "The request metadata specifies invalid video keywords.",
          "youtube.video",
        );
    }
    if (snippet.categoryId !== undefined && !CATEGORIES.has(String(snippet.categoryId)))
      return googleError(
        400,
        "invalidCategoryId",
        "The snippet.categoryId property specifies an invalid category ID.",
        "youtube.video",
      );
    if (!["public", "unlisted", "private", undefined].includes(status.privacyStatus))
      return googleError(400, "invalidVideoMetadata", "The request metadata is invalid.", "youtube.video");
    if (status.selfDeclaredMadeForKids !== undefined && typeof status.selfDeclaredMadeForKids !== "boolean")
      return googleError(400, "invalidVideoMetadata", "The request metadata is invalid.", "youtube.video");
    return null;
  }

  async function sessionPut(request: Request, url: URL): Promise<Response> {
    const session = fake.sessions.find((s) => s.id === url.searchParams.get("upload_id"));
    if (!session) return googleError(404, "notFound", "Upload session not found");
    const auth = caller(request, UPLOAD_SCOPES);
    if (auth instanceof Response) return auth;
    if (session.expired) return googleError(session.expired, "notFound", "The upload session has expired");
    const bytes = new Uint8Array(await request.arrayBuffer());
    const range = request.headers.get("content-range") ?? "";
    const probe = /^bytes \*\/(\d+)$/.exec(range);
    if (probe) {
      if (Number(probe[1]) !== session.total || bytes.length > 0)
        return googleError(400, "badRequest", "A status request is an empty PUT with bytes */<total>");
      return position(session, 200);
    }
    const chunk = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range);
    if (!chunk) return googleError(400, "badRequest", `Invalid Content-Range: ${range}`);
    const [start, end, total] = chunk.slice(1).map(Number) as [number, number, number];
    const refuse = (message: string) => {
      session.chunks.push({ start, length: bytes.length, answered: 400 });
      return googleError(400, "badRequest", message);
    };
    if (total !== session.total) return refuse(`the total ${total} is not the session's ${session.total}`);
    if (session.video) return refuse("the upload is already complete");
    if (start !== session.held)
      return refuse(`the chunk starts at ${start}; the session holds ${session.held}`);
    if (end < start || end >= total || bytes.length !== end - start + 1)
      return refuse(`Content-Range ${range} does not match the ${bytes.length} bytes sent`);
    if (end + 1 < total && bytes.length % CHUNK_UNIT !== 0)
      return refuse(`a chunk before the last must be a multiple of ${CHUNK_UNIT} bytes, not ${bytes.length}`);
    if ((request.headers.get("content-type") ?? "") !== session.contentType)
      return refuse(`Content-Type must be the session's ${session.contentType}`);
    const injected = cut;
    cut = null;
    const kept = injected ? bytes.subarray(0, Math.min(injected.keep, bytes.length)) : bytes;
    session.buffer.set(kept, start);
    session.held += kept.length;
    if (injected) {
      // The connection broke after part of the chunk arrived: YouTube keeps what it received.
      session.chunks.push({ start, length: bytes.length, answered: "cut" });
      if (session.held === session.total) complete(session);
      if (injected.then === "hang") return never();
      return googleError(injected.then, "backendError", "Backend Error");
    }
    if (session.held === session.total) complete(session);
    session.chunks.push({ start, length: bytes.length, answered: session.video ? 201 : 308 });
    if (session.video && fake.hangAfterReceive) return never();
    return position(session, 201);
  }

  /**
   * A chunk whose connection was reset part-way: like an interrupted upload at Google, the session
   * keeps the bytes that arrived (when the chunk started where the session ends) and the next status
   * probe reports them in `Range`.
   */
  function keepReceivedPrefix(request: CutRequest): void {
    const id = new URL(request.target, "http://fake.local").searchParams.get("upload_id");
    const session = fake.sessions.find((s) => s.id === id);
    const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(request.headers["content-range"] ?? "");
    if (!session || !range || session.video || session.expired) return;
    const start = Number(range[1]);
    session.chunks.push({ start, length: request.declaredLength, answered: "cut" });
    if (start !== session.held) return;
    const kept = request.received.subarray(0, session.total - start);
    session.buffer.set(kept, start);
    session.held += kept.length;
    if (session.held === session.total) complete(session);
  }

  /** 308 with the range held, or (complete) the video resource. */
  function position(session: FakeSession, doneStatus: number): Response {
    if (session.video) return json(videoResource(session.video, ["snippet", "status"]), doneStatus);
    const headers: Record<string, string> = { "content-length": "0" };
    if (session.held > 0) headers.range = `bytes=0-${session.held - 1}`;
    return new Response(null, { status: 308, headers });
  }

  function complete(session: FakeSession): void {
    const { snippet, status } = session;
    const video: FakeVideo = {
      id: randomBytes(8).toString("base64url").slice(0, 11),
      channelId: session.channelId,
      title: snippet.title,
      description: snippet.description ?? "",
      tags: Array.isArray(snippet.tags) ? snippet.tags : null,
      categoryId: snippet.categoryId ?? null,
      privacyStatus: options.unverifiedProject ? "private" : (status.privacyStatus ?? "public"),
      madeForKids:
        typeof status.selfDeclaredMadeForKids === "boolean" ? status.selfDeclaredMadeForKids : null,
      notifySubscribers: session.notifySubscribers,
      contentType: session.contentType,
      bytes: session.buffer.slice(0, session.total),
      uploadStatus: "uploaded",
      pollsLeft: fake.processingPolls,
      end: nextEnd ?? "processed",
      uploadedAt: now(),
    };
    nextEnd = null;
    session.video = video;
    fake.videos.push(video);
  }

  /**
   * `playlistItems.list` of the channel's uploads playlist (one quota unit): its videos newest first,
   * `maxResults` (default 5, at most 50) a page, `nextPageToken` while more remain; `snippet.publishedAt`
   * is when the video was added (uploaded).
   */
  function playlistItems(request: Request, url: URL): Response {
    const auth = caller(request, READ_SCOPES);
    if (auth instanceof Response) return auth;
    const q = url.searchParams;
    const channel = fake.channel;
    if (!q.get("part") || !q.get("playlistId"))
      return googleError(
        400,
        "missingRequiredParameter",
        "No filter selected. Expected one of: id, playlistId",
      );
    if (!channel || q.get("playlistId") !== uploadsPlaylist(channel.id))
      return googleError(
        404,
        "playlistNotFound",
        "The playlist identified with the request's playlistId parameter cannot be found.",
      );
    const spent = spend(1);
    if (spent) return spent;
    const size = Math.min(50, Math.max(0, Number(q.get("maxResults") ?? 5) || 5));
    const start = q.get("pageToken")
      ? Number(Buffer.from(q.get("pageToken")!, "base64url").toString()) || 0
      : 0;
    const newest = fake.videos
      .filter((v) => v.channelId === channel.id)
      .toSorted((a, b) => (b.uploadedAt ?? 0) - (a.uploadedAt ?? 0));
    const page = newest.slice(start, start + size);
    const next =
      start + page.length < newest.length
        ? Buffer.from(String(start + page.length)).toString("base64url")
        : null;
    return json({
      kind: "youtube#playlistItemListResponse",
      etag: "p1",
      ...(next ? { nextPageToken: next } : {}),
      pageInfo: { totalResults: newest.length, resultsPerPage: size },
      items: page.map((video, i) => ({
        kind: "youtube#playlistItem",
        etag: `pi${video.id}`,
        id: `PI${video.id}`,
        snippet: {
          publishedAt: new Date(video.uploadedAt ?? 0).toISOString(),
          channelId: channel.id,
          title: video.title,
          description: video.description,
          channelTitle: channel.title,
          playlistId: uploadsPlaylist(channel.id),
          position: start + i,
          resourceId: { kind: "youtube#video", videoId: video.id },
        },
      })),
    });
  }

  function listVideos(request: Request, url: URL): Response {
    const auth = caller(request, READ_SCOPES);
    if (auth instanceof Response) return auth;
    const parts = (url.searchParams.get("part") ?? "").split(",").filter(Boolean);
    const ids = (url.searchParams.get("id") ?? "").split(",").filter(Boolean);
    if (parts.length === 0 || ids.length === 0)
      return googleError(400, "missingRequiredParameter", "part and id are required");
    if (ids.length > 50)
      return googleError(400, "invalidParameter", "The id parameter takes at most 50 video ids.");
    const spent = spend(1);
    if (spent) return spent;
    if (parts.includes("statistics")) fake.statisticsReads.push(ids);
    const items = ids.flatMap((id) => {
      const video = fake.videos.find((v) => v.id === id);
      if (!video) return [];
      if (video.uploadStatus === "uploaded") {
        if (video.pollsLeft > 0) video.pollsLeft--;
        else video.uploadStatus = video.end;
      }
      return [videoResource(video, parts)];
    });
    return json({
      kind: "youtube#videoListResponse",
      etag: "v1",
      pageInfo: { totalResults: items.length, resultsPerPage: items.length },
      items,
    });
  }

  function videoResource(video: FakeVideo, parts: string[]): Record<string, any> {
    const resource: Record<string, any> = { kind: "youtube#video", etag: `e${video.id}`, id: video.id };
    if (parts.includes("snippet"))
      resource.snippet = {
        publishedAt: "2026-03-01T12:00:00Z",
        channelId: video.channelId,
        title: video.title,
        description: video.description,
        ...(video.tags ? { tags: video.tags } : {}),
        categoryId: video.categoryId ?? "22",
        channelTitle: fake.channel?.title ?? "",
      };
    if (parts.includes("status"))
      resource.status = {
        uploadStatus: video.uploadStatus,
        ...(video.uploadStatus === "failed" ? { failureReason: "codec" } : {}),
        ...(video.uploadStatus === "rejected" ? { rejectionReason: "duplicate" } : {}),
        privacyStatus: video.privacyStatus,
        license: "youtube",
        embeddable: true,
        publicStatsViewable: true,
        ...(video.madeForKids !== null ? { selfDeclaredMadeForKids: video.madeForKids } : {}),
      };
    if (parts.includes("statistics")) {
      const c = video.counts ?? {};
      resource.statistics = {
        viewCount: String(c.views ?? 0),
        ...(video.likesHidden ? {} : { likeCount: String(c.likes ?? 0) }),
        favoriteCount: String(c.favorites ?? 0),
        ...(video.commentsDisabled ? {} : { commentCount: String(c.comments ?? 0) }),
      };
    }
    if (parts.includes("processingDetails"))
      resource.processingDetails =
        video.uploadStatus === "uploaded"
          ? {
              processingStatus: "processing",
              processingProgress: { partsTotal: "1000", partsProcessed: "400", timeLeftMs: "30000" },
            }
          : video.uploadStatus === "failed"
            ? { processingStatus: "failed", processingFailureReason: "transcodeFailed" }
            : { processingStatus: "succeeded" };
    return resource;
  }

  const server = serveFake({
    controls: fake,
    failures,
    route,
    defaultFailure: (status) => {
      const reasons: Record<number, [string, string]> = {
        400: ["badRequest", "Bad Request"],
        401: ["authError", "Invalid Credentials"],
        403: ["forbidden", "The request cannot be completed: forbidden."],
        404: ["notFound", "Not Found"],
        429: [
          "rateLimitExceeded",
          "The request cannot be completed because you have exceeded your rate limit.",
        ],
        503: ["backendError", "Backend Error"],
      };
      const [reason, message] = reasons[status] ?? ["backendError", "Backend Error"];
      return { body: googleErrorBody(status, reason, message) };
    },
  });
  const served = await behindCutProxy(server, options.cuttable);
  cuts = served.cuts;
  fake.origin = served.origin;
  fake.stop = served.stop;
  return fake;
}
