// A faithful local fake of TikTok's Login Kit and Content Posting API v2 (providers.md §8, §14): the
// envelope `{data, error:{code:"ok", message, log_id}}` on every answer (success too), OAuth v2 with
// `client_key` and rotating refresh tokens, /v2/user/info/ with per-field scopes, creator_info,
// video init (FILE_UPLOAD, TikTok's chunk rules checked) answering an upload URL on a second origin
// (the upload host, plain node:http so a connection can really be cut) where chunks are PUT in
// order with Content-Range, photo init (PULL_FROM_URL: the URLs are really fetched), status fetches
// walking PROCESSING_UPLOAD/PROCESSING_DOWNLOAD → PUBLISH_COMPLETE (or FAILED) over N fetches with
// int64 post ids as raw JSON numbers, the 6-inits and 30-status-fetches a minute limits, a daily
// post cap, and an unaudited mode that lets only SELF_ONLY through; and the Display API's
// /v2/video/query/ (scope video.list, ≤ 20 ids, public posts only, 600 a minute) answering the counts
// tests set on a post.
import { createServer, type Server } from "node:http";
import {
  json,
  never,
  newControls,
  readBody,
  serveFake,
  token,
  type FailSpec,
  type FakeControls,
} from "./shared.ts";

const MiB = 1024 * 1024;
const MIN_CHUNK = 5 * MiB;
const MAX_CHUNK = 64_000_000;
const MAX_LAST_CHUNK = 128_000_000;
const DAY_MS = 24 * 60 * 60 * 1000;
const PRIVACY_LEVELS = ["PUBLIC_TO_EVERYONE", "MUTUAL_FOLLOW_FRIENDS", "FOLLOWER_OF_CREATOR", "SELF_ONLY"];
const APP_SCOPES = ["user.info.basic", "user.info.profile", "video.publish", "video.upload", "video.list"];
/** The video object's fields /v2/video/query/ takes. */
const VIDEO_FIELDS = [
  "id",
  "create_time",
  "cover_image_url",
  "share_url",
  "video_description",
  "duration",
  "height",
  "width",
  "title",
  "embed_html",
  "embed_link",
  "like_count",
  "comment_count",
  "share_count",
  "view_count",
];
/** Fields of /v2/user/info/ and the scope each needs. */
const USER_FIELDS: Record<string, string> = {
  open_id: "user.info.basic",
  union_id: "user.info.basic",
  avatar_url: "user.info.basic",
  avatar_url_100: "user.info.basic",
  avatar_large_url: "user.info.basic",
  display_name: "user.info.basic",
  username: "user.info.profile",
  bio_description: "user.info.profile",
  profile_deep_link: "user.info.profile",
  is_verified: "user.info.profile",
  follower_count: "user.info.stats",
  following_count: "user.info.stats",
  likes_count: "user.info.stats",
  video_count: "user.info.stats",
};

/** One post the fake was asked to create (an init), and where it stands. */
export interface FakePublish {
  publishId: string;
  openId: string;
  kind: "VIDEO" | "PHOTO";
  postInfo: Record<string, any>;
  sourceInfo: Record<string, any>;
  state: "uploading" | "processing" | "complete" | "failed";
  failReason: string | null;
  /** The public post id, once moderation gave one (never for SELF_ONLY). */
  postId: string | null;
  /** Video: the upload's token, the bytes received (assembled), and every chunk PUT accepted. */
  uploadToken: string;
  bytes: Uint8Array;
  receivedBytes: number;
  chunks: { index: number; range: string; length: number; repeat: boolean }[];
  /** Photos: what fetching each URL gave. */
  downloads: { url: string; status: number; contentType: string | null; bytes: number }[];
  statusFetches: number;
  processingLeft: number;
  moderationLeft: number;
  pulled: Promise<void> | null;
  createdAt: number;
  /** What viewers did with the post (tests set these; video.query reports them, missing ones as 0). */
  counts?: TikTokCounts;
  /** Deleted by the creator: video.query leaves it out. */
  deleted?: boolean;
}

/** A post's numbers as TikTok keeps them. */
export interface TikTokCounts {
  views?: number;
  likes?: number;
  comments?: number;
  shares?: number;
}

/** How the upload host misbehaves on one chunk PUT, once. */
export interface UploadFault {
  chunk: number;
  /**
   * `cut-before`: the connection drops before TikTok keeps the chunk; `cut-after`: after (the answer
   * is lost); `reset-partway`: the connection is reset once `keepBytes` of the chunk arrived, and
   * TikTok keeps none of it (a chunk counts whole or not at all: `uploaded_bytes` stays where it was).
   */
  mode: "cut-before" | "cut-after" | "503" | "reset-partway";
  keepBytes?: number;
}

/** A PUT the upload host received (or cut part-way). */
export interface UploadRequest {
  path: string;
  range: string | null;
  contentType: string | null;
  /** Body bytes received (for a `reset-partway` cut, the part that arrived). */
  length: number;
  /** Whether it was the first request on its connection (none before it could be re-sent with it). */
  fresh: boolean;
  /** Status fetches of the post made before this PUT arrived. */
  statusFetchesBefore: number;
  /** Reset part-way through its body. */
  reset: boolean;
}

/** Settings of the fake. */
export interface TikTokFakeOptions {
  clientKey?: string;
  clientSecret?: string;
  /** Access token lifetime the token answers give (TikTok's newer docs: 2 h; older: 24 h). */
  accessTtlS?: number;
  refreshTtlS?: number;
  /** False: the app is unaudited, and inits with any privacy level but SELF_ONLY are refused. */
  audited?: boolean;
  privacyLevelOptions?: string[];
  maxVideoSeconds?: number;
  commentDisabled?: boolean;
  duetDisabled?: boolean;
  stitchDisabled?: boolean;
  /** Status fetches answered PROCESSING_* once the upload or pull is done. */
  processingFetches?: number;
  /** PUBLISH_COMPLETE fetches without a post id (moderation) for a public post. */
  moderationFetches?: number;
  initsPerMinute?: number;
  statusFetchesPerMinute?: number;
  /** Posts a creator may make a day (spam_risk_too_many_posts past it); null: no cap. */
  dailyPostCap?: number | null;
  /** URL prefixes verified for PULL_FROM_URL; null: every URL is taken. */
  verifiedUrlPrefixes?: string[] | null;
  /** Scopes the user ticks on the consent page (default: all that were asked). */
  grantScopes?: string[] | null;
  /**
   * Whether video.query returns photo posts (default false: TikTok documents it for videos; whether it
   * returns photo posts is unverified).
   */
  queryReturnsPhotos?: boolean;
  videoQueriesPerMinute?: number;
}

/** The running fake: its origins, what it stored, and its switches. */
export interface TikTokFake extends FakeControls {
  origin: string;
  /** The upload host's origin (upload URLs point here). */
  uploadOrigin: string;
  stop(): Promise<void>;
  clientKey: string;
  clientSecret: string;
  user: { openId: string; unionId: string; username: string; displayName: string; avatarUrl: string };
  options: Required<Omit<TikTokFakeOptions, "clientKey" | "clientSecret" | "grantScopes">> & {
    grantScopes: string[] | null;
  };
  publishes: FakePublish[];
  /** Posts TikTok published (PUBLISH_COMPLETE). */
  posts(): FakePublish[];
  /** Authorization requests (query parameters as received). */
  authorizations: Record<string, string>[];
  /** Token requests (code exchanges and refreshes), form fields as received. */
  tokenRequests: Record<string, string>[];
  /** The `fields` of every /v2/user/info/ call. */
  userInfoFields: string[][];
  /** The JSON bodies of every init (video and photo), as received. */
  initBodies: Record<string, any>[];
  /** Every /v2/video/query/ call: the ids and fields asked for. */
  videoQueries: { ids: string[]; fields: string[] }[];
  /** Every PUT the upload host received (also those it cut). */
  uploadRequests: UploadRequest[];
  /** Makes the next PUT of `chunk` fail as `mode`, once. */
  failUpload(fault: UploadFault): void;
  /** Every access token answers 401 access_token_invalid from now on. */
  expireTokens(): void;
  /** The grant is revoked: access tokens and refresh tokens stop working. */
  revokeGrant(): void;
  /** Whether a refresh token would still be accepted. */
  refreshTokenValid(value: string): boolean;
  /** An access token (and its refresh token) without the OAuth dance. */
  issueTokens(scopes?: string[]): { accessToken: string; refreshToken: string };
}

/** Starts the fake (API and upload host) on 127.0.0.1 at free ports. */
export async function startTikTokFake(options: TikTokFakeOptions = {}): Promise<TikTokFake> {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const access = new Map<string, { scopes: string[]; state: "live" | "expired" | "revoked" }>();
  const refresh = new Map<
    string,
    { scopes: string[]; expiresAt: number; state: "live" | "used" | "revoked" }
  >();
  const codes = new Map<string, { redirectUri: string; scopes: string[] }>();
  const windows = new Map<string, number[]>();
  const faults: UploadFault[] = [];
  let nextPublish = 1000;
  let nextPostId = 7_312_345_678_901_234_567n;
  let logs = 0;

  const fake: TikTokFake = {
    ...newControls(failures),
    uploadOrigin: "",
    clientKey: options.clientKey ?? "tt-client-key",
    clientSecret: options.clientSecret ?? "tt-client-secret",
    user: {
      openId: "-000OpenIdAlice",
      unionId: "c9c60f44-a68e-4f5d-84dd-ce22faeb0ba1",
      username: "alice.tt",
      displayName: "Alice TikTok",
      avatarUrl: "https://p16-sign.tiktokcdn-us.com/alice.jpeg",
    },
    options: {
      accessTtlS: options.accessTtlS ?? 86_400,
      refreshTtlS: options.refreshTtlS ?? 180 * 86_400,
      audited: options.audited ?? true,
      privacyLevelOptions: options.privacyLevelOptions ?? [...PRIVACY_LEVELS],
      maxVideoSeconds: options.maxVideoSeconds ?? 600,
      commentDisabled: options.commentDisabled ?? false,
      duetDisabled: options.duetDisabled ?? false,
      stitchDisabled: options.stitchDisabled ?? false,
      processingFetches: options.processingFetches ?? 1,
      moderationFetches: options.moderationFetches ?? 0,
      initsPerMinute: options.initsPerMinute ?? 6,
      statusFetchesPerMinute: options.statusFetchesPerMinute ?? 30,
      dailyPostCap: options.dailyPostCap ?? null,
      verifiedUrlPrefixes: options.verifiedUrlPrefixes ?? null,
      grantScopes: options.grantScopes ?? null,
      queryReturnsPhotos: options.queryReturnsPhotos ?? false,
      videoQueriesPerMinute: options.videoQueriesPerMinute ?? 600,
    },
    publishes: [],
    posts: () => fake.publishes.filter((p) => p.state === "complete"),
    authorizations: [],
    tokenRequests: [],
    userInfoFields: [],
    initBodies: [],
    videoQueries: [],
    uploadRequests: [],
    failUpload: (fault) => void faults.push(fault),
    expireTokens: () => {
      for (const entry of access.values()) if (entry.state === "live") entry.state = "expired";
    },
    revokeGrant: () => {
      access.forEach((t) => (t.state = "revoked"));
      refresh.forEach((r) => (r.state = "revoked"));
    },
    refreshTokenValid: (value) => {
      const entry = refresh.get(value);
      return entry !== undefined && entry.state === "live" && entry.expiresAt > Date.now();
    },
    issueTokens: (scopes = ["user.info.basic", "video.publish", "video.upload", "video.list"]) => {
      const accessToken = token("act.");
      const refreshToken = token("rft.");
      access.set(accessToken, { scopes, state: "live" });
      refresh.set(refreshToken, {
        scopes,
        expiresAt: Date.now() + fake.options.refreshTtlS * 1000,
        state: "live",
      });
      return { accessToken, refreshToken };
    },
  };

  const logId = () => `2026030112000${String(++logs).padStart(6, "0")}`;
  /** The envelope TikTok wraps every answer in. */
  const ok = (data: Record<string, unknown>) =>
    json({ data, error: { code: "ok", message: "", log_id: logId() } });
  const apiError = (status: number, code: string, message: string) =>
    json({ data: {}, error: { code, message, log_id: logId() } }, status);
  const oauthError = (status: number, error: string, description: string) =>
    json({ error, error_description: description, log_id: logId() }, status);

  /** Whether a call fits a per-minute window (real time), counting it when it does. */
  const withinLimit = (key: string, perMinute: number) => {
    const now = Date.now();
    const recent = (windows.get(key) ?? []).filter((t) => now - t < 60_000);
    if (recent.length >= perMinute) return false;
    recent.push(now);
    windows.set(key, recent);
    return true;
  };

  /** The caller's token entry (with the token), or the 401 to answer. */
  const caller = (request: Request): { token: string; scopes: string[] } | Response => {
    const value = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const entry = value ? access.get(value) : undefined;
    if (!entry || entry.state !== "live")
      return apiError(
        401,
        "access_token_invalid",
        "The access token is invalid or not found in the request.",
      );
    return { token: value!, scopes: entry.scopes };
  };
  const missingScope = (scope: string) =>
    apiError(
      401,
      "scope_not_authorized",
      `The user did not authorize the scope required for completing this request: ${scope}.`,
    );

  async function route(request: Request, url: URL): Promise<Response> {
    const { pathname } = url;
    const method = request.method;
    if (method === "GET" && pathname === "/v2/auth/authorize/") return authorize(url);
    if (method === "POST" && pathname === "/v2/oauth/token/") return tokenEndpoint(request);
    const auth = caller(request);
    if (auth instanceof Response) return auth;
    if (method === "GET" && pathname === "/v2/user/info/") return userInfo(url, auth.scopes);
    if (method !== "POST") return apiError(404, "invalid_params", `No route for ${method} ${pathname}`);
    if (pathname === "/v2/video/query/") return videoQuery(request, url, auth);
    if (!auth.scopes.includes("video.publish")) return missingScope("video.publish");
    if (!(request.headers.get("content-type") ?? "").startsWith("application/json"))
      return apiError(400, "invalid_params", "Content-Type must be application/json; charset=UTF-8");
    if (pathname === "/v2/post/publish/creator_info/query/") return creatorInfo(auth.token);
    if (pathname === "/v2/post/publish/video/init/") return videoInit(request, auth.token);
    if (pathname === "/v2/post/publish/content/init/") return photoInit(request, auth.token);
    if (pathname === "/v2/post/publish/status/fetch/") return statusFetch(request, auth.token);
    return apiError(404, "invalid_params", `No route for ${method} ${pathname}`);
  }

  function authorize(url: URL): Response {
    const q = Object.fromEntries(url.searchParams);
    fake.authorizations.push(q);
    if (q.client_key !== fake.clientKey) return new Response("client_key is invalid", { status: 400 });
    if (!q.redirect_uri) return new Response("redirect_uri is missing", { status: 400 });
    const target = new URL(q.redirect_uri);
    if (q.state) target.searchParams.set("state", q.state);
    const asked = (q.scope ?? "").split(",").filter(Boolean);
    const unknown = asked.find((s) => !APP_SCOPES.includes(s));
    if (q.response_type !== "code" || asked.length === 0 || unknown) {
      target.searchParams.set("error", unknown ? "invalid_scope" : "invalid_request");
      target.searchParams.set(
        "error_description",
        unknown ? `scope ${unknown} is not approved` : "bad request",
      );
      return new Response(null, { status: 302, headers: { location: String(target) } });
    }
    const granted = fake.options.grantScopes ?? asked;
    const code = token("code_");
    codes.set(code, { redirectUri: q.redirect_uri, scopes: granted });
    target.searchParams.set("code", code);
    target.searchParams.set("scopes", granted.join(","));
    return new Response(null, { status: 302, headers: { location: String(target) } });
  }

  async function tokenEndpoint(request: Request): Promise<Response> {
    const form = (await readBody(request)) as Record<string, string>;
    fake.tokenRequests.push(form);
    if (form.client_key !== fake.clientKey || form.client_secret !== fake.clientSecret)
      return oauthError(401, "invalid_client", "Client key or secret is incorrect.");
    const issue = (scopes: string[]) => {
      const { accessToken, refreshToken } = fake.issueTokens(scopes);
      return json({
        access_token: accessToken,
        expires_in: fake.options.accessTtlS,
        open_id: fake.user.openId,
        refresh_expires_in: fake.options.refreshTtlS,
        refresh_token: refreshToken,
        scope: scopes.join(","),
        token_type: "Bearer",
      });
    };
    if (form.grant_type === "authorization_code") {
      const grant = codes.get(form.code ?? "");
      if (!grant || grant.redirectUri !== form.redirect_uri)
        return oauthError(400, "invalid_grant", "Authorization code is expired or invalid.");
      codes.delete(form.code!);
      return issue(grant.scopes);
    }
    if (form.grant_type === "refresh_token") {
      const entry = refresh.get(form.refresh_token ?? "");
      if (!entry || entry.state !== "live" || entry.expiresAt <= Date.now())
        return oauthError(400, "invalid_grant", "Refresh token is invalid or expired.");
      entry.state = "used"; // rotation: the answer carries the next refresh token
      return issue(entry.scopes);
    }
    return oauthError(400, "unsupported_grant_type", `grant_type ${form.grant_type} is not supported`);
  }

  function userInfo(url: URL, scopes: string[]): Response {
    const fields = (url.searchParams.get("fields") ?? "").split(",").filter(Boolean);
    fake.userInfoFields.push(fields);
    if (fields.length === 0) return apiError(400, "invalid_params", "fields is required");
    const unknown = fields.find((f) => !(f in USER_FIELDS));
    if (unknown) return apiError(400, "invalid_params", `Invalid field: ${unknown}`);
    const lacking = fields.find((f) => !scopes.includes(USER_FIELDS[f]!));
    if (lacking) return missingScope(USER_FIELDS[lacking]!);
    const all: Record<string, unknown> = {
      open_id: fake.user.openId,
      union_id: fake.user.unionId,
      avatar_url: fake.user.avatarUrl,
      display_name: fake.user.displayName,
      username: fake.user.username,
    };
    return ok({ user: Object.fromEntries(fields.filter((f) => f in all).map((f) => [f, all[f]])) });
  }

  function creatorInfo(accessToken: string): Response {
    if (!withinLimit(`creator:${accessToken}`, 20))
      return apiError(429, "rate_limit_exceeded", "API rate limit was exceeded.");
    return ok({
      creator_avatar_url: fake.user.avatarUrl,
      creator_username: fake.user.username,
      creator_nickname: fake.user.displayName,
      privacy_level_options: fake.options.privacyLevelOptions,
      comment_disabled: fake.options.commentDisabled,
      duet_disabled: fake.options.duetDisabled,
      stitch_disabled: fake.options.stitchDisabled,
      max_video_post_duration_sec: fake.options.maxVideoSeconds,
    });
  }

  /** The checks every init shares: the throttle, the daily cap, privacy and audit status. */
  function initRefusal(accessToken: string, info: Record<string, any>): Response | null {
    if (!withinLimit(`init:${accessToken}`, fake.options.initsPerMinute))
      return apiError(429, "rate_limit_exceeded", "API rate limit was exceeded.");
    const today = fake.publishes.filter((p) => p.state !== "failed" && Date.now() - p.createdAt < DAY_MS);
    if (fake.options.dailyPostCap !== null && today.length >= fake.options.dailyPostCap)
      return apiError(
        403,
        "spam_risk_too_many_posts",
        "The daily post cap from the API is reached for the current user.",
      );
    const privacy = info.privacy_level;
    if (!PRIVACY_LEVELS.includes(privacy))
      return apiError(400, "invalid_params", `privacy_level ${privacy} is invalid`);
    if (!fake.options.privacyLevelOptions.includes(privacy))
      return apiError(
        400,
        "privacy_level_option_mismatch",
        "privacy_level is not one of privacy_level_options.",
      );
    if (!fake.options.audited && privacy !== "SELF_ONLY")
      return apiError(
        403,
        "unaudited_client_can_only_post_to_private_accounts",
        "Unaudited clients can only post to a private account.",
      );
    if (info.brand_content_toggle === true && privacy === "SELF_ONLY")
      return apiError(400, "invalid_params", "Branded content cannot be private.");
    for (const flag of ["disable_comment", "brand_content_toggle", "brand_organic_toggle"])
      if (info[flag] !== undefined && typeof info[flag] !== "boolean")
        return apiError(400, "invalid_params", `${flag} must be a boolean`);
    return null;
  }

  function newPublish(kind: FakePublish["kind"], info: Record<string, any>, source: Record<string, any>) {
    const publish: FakePublish = {
      publishId: `${kind === "VIDEO" ? "v_pub_file" : "p_pub_url"}~v2-1.${++nextPublish}`,
      openId: fake.user.openId,
      kind,
      postInfo: info,
      sourceInfo: source,
      state: kind === "VIDEO" ? "uploading" : "processing",
      failReason: null,
      postId: null,
      uploadToken: token("utok"),
      bytes: new Uint8Array(kind === "VIDEO" ? Number(source.video_size) : 0),
      receivedBytes: 0,
      chunks: [],
      downloads: [],
      statusFetches: 0,
      processingLeft: fake.options.processingFetches,
      moderationLeft: fake.options.moderationFetches,
      pulled: null,
      createdAt: Date.now(),
    };
    fake.publishes.push(publish);
    return publish;
  }

  async function videoInit(request: Request, accessToken: string): Promise<Response> {
    const body = await readBody(request);
    fake.initBodies.push(body);
    const info = (body.post_info ?? {}) as Record<string, any>;
    const source = (body.source_info ?? {}) as Record<string, any>;
    const refusal = initRefusal(accessToken, info);
    if (refusal) return refusal;
    const title = typeof info.title === "string" ? info.title : "";
    if (title.length > 2200) return apiError(400, "invalid_params", "title is longer than 2200 runes");
    for (const flag of ["disable_duet", "disable_stitch", "is_aigc"])
      if (info[flag] !== undefined && typeof info[flag] !== "boolean")
        return apiError(400, "invalid_params", `${flag} must be a boolean`);
    if (source.source !== "FILE_UPLOAD")
      return apiError(400, "invalid_params", "this fake takes FILE_UPLOAD");
    const planError = chunkRuleError(source);
    if (planError) return apiError(400, "invalid_params", planError);
    const publish = newPublish("VIDEO", info, source);
    if (fake.hangAfterReceive) return never();
    const uploadId = publish.publishId.split(".")[1];
    return ok({
      publish_id: publish.publishId,
      upload_url: `${fake.uploadOrigin}/upload/?upload_id=${uploadId}&upload_token=${publish.uploadToken}`,
    });
  }

  async function photoInit(request: Request, accessToken: string): Promise<Response> {
    const body = await readBody(request);
    fake.initBodies.push(body);
    const info = (body.post_info ?? {}) as Record<string, any>;
    const source = (body.source_info ?? {}) as Record<string, any>;
    if (body.media_type !== "PHOTO") return apiError(400, "invalid_params", "media_type must be PHOTO");
    if (body.post_mode !== "DIRECT_POST" && body.post_mode !== "MEDIA_UPLOAD")
      return apiError(400, "invalid_params", "post_mode must be DIRECT_POST or MEDIA_UPLOAD");
    const refusal = initRefusal(accessToken, info);
    if (refusal) return refusal;
    if (typeof info.title === "string" && info.title.length > 90)
      return apiError(400, "invalid_params", "title is longer than 90 runes");
    if (typeof info.description === "string" && info.description.length > 4000)
      return apiError(400, "invalid_params", "description is longer than 4000 runes");
    for (const flag of ["disable_duet", "disable_stitch", "video_cover_timestamp_ms"])
      if (flag in info) return apiError(400, "invalid_params", `${flag} is not a photo post field`);
    const urls: unknown[] = Array.isArray(source.photo_images) ? source.photo_images : [];
    if (source.source !== "PULL_FROM_URL") return apiError(400, "invalid_params", "photos use PULL_FROM_URL");
    if (urls.length < 1 || urls.length > 35 || urls.some((u) => typeof u !== "string"))
      return apiError(400, "invalid_params", "photo_images takes 1 to 35 URLs");
    const cover = Number(source.photo_cover_index ?? 0);
    if (!Number.isInteger(cover) || cover < 0 || cover >= urls.length)
      return apiError(400, "invalid_params", "photo_cover_index is out of range");
    const prefixes = fake.options.verifiedUrlPrefixes;
    if (prefixes && (urls as string[]).some((u) => !prefixes.some((p) => u.startsWith(p))))
      return apiError(
        403,
        "url_ownership_unverified",
        "The domain or URL prefix of the URLs is not verified.",
      );
    const publish = newPublish("PHOTO", info, source);
    // TikTok pulls after answering; status fetches wait for the pull to end.
    publish.pulled = pull(publish, urls as string[]);
    if (fake.hangAfterReceive) return never();
    return ok({ publish_id: publish.publishId });
  }

  async function pull(publish: FakePublish, urls: string[]): Promise<void> {
    for (const url of urls) {
      let result: FakePublish["downloads"][number];
      try {
        const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
        const bytes = (await response.arrayBuffer()).byteLength;
        result = { url, status: response.status, contentType: response.headers.get("content-type"), bytes };
      } catch {
        result = { url, status: 0, contentType: null, bytes: 0 };
      }
      publish.downloads.push(result);
      const type = result.contentType?.split(";")[0]?.trim() ?? "";
      if (publish.failReason === null && result.status !== 200) publish.failReason = "photo_pull_failed";
      if (publish.failReason === null && !["image/jpeg", "image/webp"].includes(type))
        publish.failReason = "file_format_check_failed";
    }
  }

  async function statusFetch(request: Request, accessToken: string): Promise<Response> {
    if (!withinLimit(`status:${accessToken}`, fake.options.statusFetchesPerMinute))
      return apiError(429, "rate_limit_exceeded", "API rate limit was exceeded.");
    const body = await readBody(request);
    const publish = fake.publishes.find((p) => p.publishId === body.publish_id);
    if (!publish) return apiError(400, "invalid_params", "publish_id is invalid");
    publish.statusFetches += 1;
    if (publish.pulled) await publish.pulled;
    if (publish.state === "processing") {
      if (publish.processingLeft > 0) publish.processingLeft -= 1;
      else if (publish.failReason) publish.state = "failed";
      else publish.state = "complete";
    }
    if (
      publish.state === "complete" &&
      publish.postId === null &&
      publish.postInfo.privacy_level !== "SELF_ONLY"
    ) {
      if (publish.moderationLeft > 0) publish.moderationLeft -= 1;
      else publish.postId = String(nextPostId++);
    }
    const status =
      publish.state === "uploading" || (publish.state === "processing" && publish.kind === "VIDEO")
        ? "PROCESSING_UPLOAD"
        : publish.state === "processing"
          ? "PROCESSING_DOWNLOAD"
          : publish.state === "failed"
            ? "FAILED"
            : "PUBLISH_COMPLETE";
    const data = {
      status,
      ...(publish.state === "failed" ? { fail_reason: publish.failReason } : {}),
      ...(publish.kind === "VIDEO" ? { uploaded_bytes: publish.receivedBytes } : {}),
      ...(publish.kind === "PHOTO"
        ? { downloaded_bytes: publish.downloads.reduce((n, d) => n + d.bytes, 0) }
        : {}),
      publicaly_available_post_id: "__IDS__",
    };
    // int64 ids go out as JSON numbers, as TikTok sends them (too large for a JS number).
    const text = JSON.stringify({ data, error: { code: "ok", message: "", log_id: logId() } }).replace(
      '"__IDS__"',
      `[${publish.postId ?? ""}]`,
    );
    return new Response(text, {
      status: 200,
      headers: { "content-type": "application/json; charset=UTF-8" },
    });
  }

  /**
   * The Display API's lookup: the creator's public posts among `filters.video_ids` (1 to 20), with the
   * fields asked for (`id` a string, as TikTok documents the video object). Ids that are not the
   * creator's public videos (deleted, private, another's, unknown) are left out, without an error.
   */
  async function videoQuery(
    request: Request,
    url: URL,
    auth: { token: string; scopes: string[] },
  ): Promise<Response> {
    if (!auth.scopes.includes("video.list")) return missingScope("video.list");
    if (!withinLimit(`query:${auth.token}`, fake.options.videoQueriesPerMinute))
      return apiError(429, "rate_limit_exceeded", "API rate limit was exceeded.");
    if (!(request.headers.get("content-type") ?? "").startsWith("application/json"))
      return apiError(400, "invalid_params", "Content-Type must be application/json; charset=UTF-8");
    const fields = (url.searchParams.get("fields") ?? "").split(",").filter(Boolean);
    if (fields.length === 0) return apiError(400, "invalid_params", "fields is required");
    const unknown = fields.find((f) => !VIDEO_FIELDS.includes(f));
    if (unknown) return apiError(400, "invalid_params", `Invalid field: ${unknown}`);
    const body = await readBody(request);
    const ids: unknown = body.filters?.video_ids;
    if (
      !Array.isArray(ids) ||
      ids.length === 0 ||
      ids.some((id) => typeof id !== "string" || !/^\d+$/.test(id))
    )
      return apiError(400, "invalid_params", "filters.video_ids must be a list of video ids");
    if (ids.length > 20) return apiError(400, "invalid_params", "filters.video_ids takes at most 20 ids");
    fake.videoQueries.push({ ids: ids as string[], fields });
    const videos = (ids as string[]).flatMap((id) => {
      const post = fake.publishes.find(
        (p) =>
          p.postId === id &&
          p.state === "complete" &&
          !p.deleted &&
          (p.kind === "VIDEO" || fake.options.queryReturnsPhotos),
      );
      if (!post) return [];
      const c = post.counts ?? {};
      const all: Record<string, unknown> = {
        id: post.postId,
        title: String(post.postInfo.title ?? ""),
        create_time: Math.floor(post.createdAt / 1000),
        share_url: `https://www.tiktok.com/@${fake.user.username}/video/${post.postId}`,
        view_count: c.views ?? 0,
        like_count: c.likes ?? 0,
        comment_count: c.comments ?? 0,
        share_count: c.shares ?? 0,
      };
      return [Object.fromEntries(fields.filter((f) => f in all).map((f) => [f, all[f]]))];
    });
    return ok({ videos, cursor: 0, has_more: false });
  }

  const server = serveFake({
    controls: fake,
    failures,
    route,
    defaultFailure: (status) => {
      const error = (code: string, message: string) => ({
        body: { data: {}, error: { code, message, log_id: logId() } },
      });
      if (status === 401)
        return error("access_token_invalid", "The access token is invalid or not found in the request.");
      if (status === 403) return error("scope_permission_missed", "The app lacks the permission.");
      if (status === 429) return error("rate_limit_exceeded", "API rate limit was exceeded.");
      if (status >= 500) return error("internal_error", "Something went wrong. Please try again later.");
      return error("invalid_params", "The request parameters are invalid.");
    },
  });
  fake.origin = server.origin;

  const uploads = await startUploadHost({
    find: (uploadId, uploadToken) =>
      fake.publishes.find((p) => p.publishId.endsWith(`.${uploadId}`) && p.uploadToken === uploadToken) ??
      null,
    faults,
    record: (entry) => fake.uploadRequests.push(entry),
    logId,
    maxVideoSeconds: () => fake.options.maxVideoSeconds,
  });
  fake.uploadOrigin = uploads.origin;
  fake.stop = async () => {
    await server.stop();
    await uploads.stop();
  };
  return fake;
}

/** Why an init's FILE_UPLOAD plan breaks TikTok's chunk rules, or null. */
function chunkRuleError(source: Record<string, any>): string | null {
  const size = source.video_size;
  const chunk = source.chunk_size;
  const count = source.total_chunk_count;
  if (![size, chunk, count].every((n) => Number.isInteger(n) && n > 0))
    return "video_size, chunk_size and total_chunk_count must be positive integers";
  if (count > 1000) return "at most 1000 chunks";
  if (size < MIN_CHUNK && (chunk !== size || count !== 1))
    return "a video under 5 MB is uploaded whole (chunk_size = video_size, one chunk)";
  if (count === 1 && chunk === size) return size > MAX_CHUNK ? "a video over 64 MB must be chunked" : null;
  if (chunk < MIN_CHUNK || chunk > MAX_CHUNK) return "chunk_size must be between 5 MB and 64 MB";
  if (count !== Math.floor(size / chunk)) return "total_chunk_count must be floor(video_size / chunk_size)";
  if (size - (count - 1) * chunk > MAX_LAST_CHUNK) return "the last chunk may be at most 128 MB";
  return null;
}

/** The video duration in an MP4's mvhd box, seconds; null when the bytes are not an MP4 this reads. */
function mp4Duration(bytes: Uint8Array): number | null {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = view.indexOf("mvhd", 0, "latin1");
  if (at < 0 || at + 24 > view.length) return null;
  const version = view[at + 4];
  const timescale = version === 1 ? view.readUInt32BE(at + 24) : view.readUInt32BE(at + 16);
  const duration = version === 1 ? Number(view.readBigUInt64BE(at + 28)) : view.readUInt32BE(at + 20);
  return timescale > 0 ? duration / timescale : null;
}

/**
 * The upload host: `PUT /upload/?upload_id&upload_token` with `Content-Range: bytes a-b/total`. Chunks
 * go in order (a chunk already received may come again, unchanged); each must match the init's plan.
 * 206 while chunks are missing, 201 once the video is whole; then it is checked (MP4, duration).
 */
async function startUploadHost(input: {
  find: (uploadId: string, uploadToken: string) => FakePublish | null;
  faults: UploadFault[];
  record: (entry: UploadRequest) => void;
  logId: () => string;
  maxVideoSeconds: () => number;
}): Promise<{ origin: string; stop: () => Promise<void> }> {
  const requestsOn = new WeakMap<object, number>();
  const server: Server = createServer((req, res) => {
    const parts: Buffer[] = [];
    const url = new URL(req.url ?? "/", "http://upload.local");
    const range = req.headers["content-range"] ?? null;
    const publishOf = () =>
      input.find(url.searchParams.get("upload_id") ?? "", url.searchParams.get("upload_token") ?? "");
    const seen = requestsOn.get(req.socket) ?? 0;
    requestsOn.set(req.socket, seen + 1);
    const entry = (length: number, reset: boolean): UploadRequest => ({
      path: url.pathname,
      range,
      contentType: req.headers["content-type"] ?? null,
      length,
      fresh: seen === 0,
      statusFetchesBefore: publishOf()?.statusFetches ?? 0,
      reset,
    });
    // A reset part-way through the body: decided from the head, before the body is read.
    const chunkSize = Number(publishOf()?.sourceInfo.chunk_size);
    const first = Number(/^bytes (\d+)-/.exec(range ?? "")?.[1] ?? Number.NaN);
    const partway = input.faults.findIndex(
      (f) => f.mode === "reset-partway" && chunkSize > 0 && f.chunk === Math.floor(first / chunkSize),
    );
    const keepBytes = partway >= 0 ? (input.faults.splice(partway, 1)[0]!.keepBytes ?? 1) : null;
    let arrived = 0;
    req.on("data", (part: Buffer) => {
      if (keepBytes === null) return void parts.push(part);
      arrived += part.length;
      if (arrived < keepBytes || req.socket.destroyed) return;
      input.record(entry(keepBytes, true));
      req.socket.destroy();
    });
    req.on("end", () => {
      if (keepBytes !== null) return;
      const body = new Uint8Array(Buffer.concat(parts));
      input.record(entry(body.length, false));
      const answer = (status: number, code = "ok", message = "") => {
        // Connections are kept alive, as TikTok's upload host does: a PUT on a reused connection that
        // drops is what Bun's fetch would silently send again (Herald sends each chunk on a new one).
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify({ data: {}, error: { code, message, log_id: input.logId() } }));
      };
      const publish = publishOf();
      if (req.method !== "PUT" || url.pathname !== "/upload/")
        return answer(404, "invalid_params", "not found");
      if (!publish) return answer(403, "invalid_params", "upload_id or upload_token is invalid");
      const type = String(req.headers["content-type"] ?? "");
      if (!["video/mp4", "video/quicktime", "video/webm"].includes(type))
        return answer(400, "invalid_params", `Content-Type ${type} is not a video type`);
      const match = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(range ?? "");
      const size = publish.bytes.length;
      if (!match || Number(match[3]) !== size)
        return answer(400, "invalid_params", "Content-Range is invalid");
      const first = Number(match[1]);
      const last = Number(match[2]);
      const chunkSize = Number(publish.sourceInfo.chunk_size);
      const count = Number(publish.sourceInfo.total_chunk_count);
      const index = Math.floor(first / chunkSize);
      const expectedLast = index === count - 1 ? size - 1 : (index + 1) * chunkSize - 1;
      if (first % chunkSize !== 0 || index >= count || last !== expectedLast)
        return answer(400, "invalid_params", `bytes ${first}-${last} is not chunk ${index} of the plan`);
      if (Number(req.headers["content-length"]) !== body.length || body.length !== last - first + 1)
        return answer(400, "invalid_params", "Content-Length does not match the range");
      const received = publish.chunks.filter((c) => !c.repeat).length;
      if (index > received) return answer(416, "invalid_params", `chunk ${received} must come first`);
      const fault = input.faults.findIndex((f) => f.chunk === index);
      const mode = fault >= 0 ? input.faults.splice(fault, 1)[0]!.mode : null;
      if (mode === "503") return answer(503, "internal_error", "upload service unavailable");
      if (mode === "cut-before") return void req.socket.destroy();
      const repeat = index < received;
      if (repeat && !Buffer.from(publish.bytes.subarray(first, last + 1)).equals(Buffer.from(body)))
        return answer(400, "invalid_params", `chunk ${index} came again with other bytes`);
      publish.bytes.set(body, first);
      publish.chunks.push({ index, range: range!, length: body.length, repeat });
      if (!repeat) publish.receivedBytes = last + 1;
      const whole = publish.receivedBytes === size;
      if (whole && publish.state === "uploading") {
        publish.state = "processing";
        const duration = mp4Duration(publish.bytes);
        if (duration === null) publish.failReason = "file_format_check_failed";
        else if (duration > input.maxVideoSeconds()) publish.failReason = "duration_check_failed";
      }
      if (mode === "cut-after") return void req.socket.destroy();
      return answer(whole ? 201 : 206);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as { port: number }).port;
  return {
    origin: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
