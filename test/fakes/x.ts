// A faithful local fake of X's API v2 (providers.md §1, §14): OAuth 2.0 authorization code + PKCE
// for a confidential client (HTTP Basic at the token endpoint, single-use codes checked against the
// verifier, two-hour access tokens, rotating single-use refresh tokens), /2/users/me, /2/tweets
// (weighted 280, ≤4 media that exist and are processed, duplicate text → 403, 100 per 15 min per
// user → 429 with x-rate-limit-*), the v2 media upload (simple, initialize/append/finalize and the
// older command=INIT|APPEND|FINALIZE form, STATUS polls pending → in_progress → succeeded), media
// metadata, the post lookup GET /2/tweets?ids= with public and non-public metrics (the latter only on
// the author's posts younger than 30 days, else a partial "not-authorized-for-field" error), and X's
// problem JSON for 400/401/403/429. Multipart bodies are parsed byte-exactly here
// (a part without a filename is binary for X, a string for a generic form parser).
import { createHash } from "node:crypto";
import {
  json,
  never,
  newControls,
  onFreshConnection,
  serveFake,
  behindCutProxy,
  cutProxyFor,
  token,
  type FailSpec,
  type FakeControls,
} from "./shared.ts";

/** A post the fake holds. */
export interface FakeTweet {
  id: string;
  text: string;
  mediaIds: string[];
  replyTo: string | null;
  authorId: string;
  /** When it was posted (the fake's clock), epoch ms. */
  createdAt: number;
  /** What readers did with it (tests set these; the lookup reports them, missing ones as 0). */
  counts?: XCounts;
}

/** A post's numbers as X keeps them. */
export interface XCounts {
  retweets?: number;
  replies?: number;
  likes?: number;
  quotes?: number;
  bookmarks?: number;
  /** The public impression count (the "Views" X shows). */
  impressions?: number;
  /** non_public_metrics.impression_count. */
  nonPublicImpressions?: number;
  /** non_public_metrics.url_link_clicks (X reports it only for a post with a link). */
  linkClicks?: number;
  profileClicks?: number;
  /** The attached video's public_metrics.view_count. */
  videoViews?: number;
}

/** Where an upload's processing stands; null for media that needs none (still images). */
export type ProcessingState = "pending" | "in_progress" | "succeeded" | "failed" | null;

/** One uploaded media id. */
export interface FakeMedia {
  id: string;
  mediaKey: string;
  mediaType: string;
  category: string;
  totalBytes: number;
  /** Segments received by append, by index. */
  segments: Map<number, Uint8Array>;
  /** The whole file once finalized (or uploaded at once). */
  bytes: Uint8Array | null;
  state: ProcessingState;
  /** STATUS polls left before processing ends. */
  pollsLeft: number;
  /** Processing ends in `failed` instead of `succeeded`. */
  fails: boolean;
  altText: string | null;
  attached: boolean;
}

/** Settings of the fake app and account. */
export interface XFakeOptions {
  clientId?: string;
  clientSecret?: string;
  /** Callback URLs registered for the app; the authorize page refuses any other. */
  redirectUris?: string[];
  /** STATUS polls a GIF or video takes to process (0: finalize answers ready). Default 2. */
  processingPolls?: number;
  /** Posts per user per 15 minutes before 429. Default 100. */
  tweetsPer15Min?: number;
  /** The fake's clock (token lifetimes, code expiry, rate windows). Default Date.now. */
  now?: () => number;
  /** Serve through the cut proxy (test/fakes/shared.ts), so an append's connection can be reset mid-body. */
  cuttable?: boolean;
}

/** One append as it reached X: a segment stored, or a request reset part-way (nothing of it kept). */
export interface FakeAppend {
  mediaId: string;
  /** The segment_index stored; null for a cut append (its form never arrived whole). */
  segment: number | null;
  cut: boolean;
  /** Whether it was the first request on its connection (known behind the cut proxy). */
  fresh: boolean;
}

/** The running fake: origin, app, account, what it stored, and its switches. */
export interface XFake extends FakeControls {
  origin: string;
  stop(): Promise<void>;
  clientId: string;
  clientSecret: string;
  /** Registered callback URLs (tests add Herald's once its port is known). */
  redirectUris: string[];
  /** The account; `subscription_type` as users/me reports it (Basic, Premium, PremiumPlus: long posts). */
  user: { id: string; username: string; name: string; profile_image_url: string; subscription_type: string };
  tweets: FakeTweet[];
  media: FakeMedia[];
  /** Every authorization the consent page granted. */
  authorizations: {
    clientId: string;
    redirectUri: string;
    scope: string;
    challenge: string;
    state: string;
  }[];
  /** Every grant the token endpoint answered with tokens, in order. */
  grants: { grantType: string; refreshToken: string | null; issued: string }[];
  /** STATUS polls for GIFs and videos finalized from now on. */
  processingPolls: number;
  /** GIFs and videos finalized from now on end `failed`. */
  failProcessing: boolean;
  /** Every timeline read (GET /2/users/:id/tweets) answered: the user, start_time and pagination token. */
  timelineReads: { userId: string; startTime: string | null; token: string | null }[];
  /** Every post lookup (GET /2/tweets?ids=) answered: the ids and the tweet.fields asked for. */
  lookups: { ids: string[]; fields: string[] }[];
  /** Processing states the fake answered (finalize, then each STATUS), in order. */
  processingLog: { mediaId: string; via: "finalize" | "status"; state: string }[];
  /** Every chunked-upload append, in order (also those cut). */
  appends: FakeAppend[];
  /**
   * The connection of the next append is reset once `keepBytes` of its body arrived (needs
   * `cuttable`). X keeps nothing of a segment that did not arrive whole; the same segment_index
   * sent again is stored as that segment.
   */
  resetNextAppend(input: { keepBytes: number }): void;
  /** Every access token issued so far answers 401 from now on (as after two hours). */
  expireAccessTokens(): void;
  /** Every refresh token issued so far is refused from now on (the user revoked the app). */
  revokeRefreshTokens(): void;
  /** A token pair for the account without the OAuth dance. */
  issueTokens(scope?: string): { accessToken: string; refreshToken: string };
  /** Whether a refresh token would still be accepted. */
  refreshTokenValid(refreshToken: string): boolean;
}

const PROBLEMS = "https://api.x.com/2/problems";
const SCOPES = new Set([
  "tweet.read",
  "tweet.write",
  "tweet.moderate.write",
  "users.read",
  "follows.read",
  "follows.write",
  "offline.access",
  "space.read",
  "mute.read",
  "mute.write",
  "like.read",
  "like.write",
  "list.read",
  "list.write",
  "block.read",
  "block.write",
  "bookmark.read",
  "bookmark.write",
  "media.write",
]);
const ACCESS_TTL_S = 7200;
const CODE_TTL_MS = 30_000;
const WINDOW_MS = 15 * 60_000;
const MB = 1024 * 1024;
const MAX_BYTES: Record<string, number> = {
  tweet_image: 5 * MB,
  tweet_gif: 15 * MB,
  tweet_video: 512 * MB,
};
const EXPIRES_AFTER_SECS = 86_400;
/** X shows non-public metrics of posts younger than this. */
const NON_PUBLIC_MS = 30 * 24 * 60 * 60_000;
const TWEET_FIELDS = new Set([
  "attachments",
  "author_id",
  "conversation_id",
  "created_at",
  "entities",
  "id",
  "in_reply_to_user_id",
  "lang",
  "non_public_metrics",
  "note_tweet",
  "organic_metrics",
  "public_metrics",
  "referenced_tweets",
  "text",
]);

/** X's weighted length, written apart from the adapter's (twitter-text v3 ranges; an emoji counts 2). */
export function weightedLength(text: string): number {
  const light = (cp: number) =>
    cp <= 4351 || (cp >= 8192 && cp <= 8205) || (cp >= 8208 && cp <= 8223) || (cp >= 8242 && cp <= 8247);
  let total = 0;
  for (const { segment } of new Intl.Segmenter("en", { granularity: "grapheme" }).segment(
    text.normalize("NFC"),
  )) {
    const cps = Array.from(segment, (c) => c.codePointAt(0)!);
    const emoji = /\p{Extended_Pictographic}|\p{Regional_Indicator}|\u20E3/u.test(segment);
    if (emoji && !(cps.length === 1 && light(cps[0]!))) total += 2;
    else total += cps.reduce((n, cp) => n + (light(cp) ? 1 : 2), 0);
  }
  return total;
}

/** The settings that point Herald's X app (its client and both X origins) at this fake. */
export function xFakeEnv(fake: XFake): Record<string, string> {
  return {
    HERALD_X_CLIENT_ID: fake.clientId,
    HERALD_X_CLIENT_SECRET: fake.clientSecret,
    HERALD_X_API_BASE: fake.origin,
    HERALD_X_AUTH_BASE: fake.origin,
  };
}

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startXFake(options: XFakeOptions = {}): Promise<XFake> {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const now = options.now ?? Date.now;
  const access = new Map<string, { expiresAt: number; scopes: Set<string>; expired: boolean }>();
  const refresh = new Map<string, { used: boolean; revoked: boolean; scope: string }>();
  const codes = new Map<
    string,
    { clientId: string; redirectUri: string; challenge: string; scope: string; expiresAt: number }
  >();
  const created: number[] = [];
  let nextId = 1_880_028_106_020_515_000n;
  const id = () => String(++nextId);

  const fake: XFake = {
    ...newControls(failures),
    clientId: options.clientId ?? "x-client-id",
    clientSecret: options.clientSecret ?? "x-client-secret",
    redirectUris: [...(options.redirectUris ?? [])],
    user: {
      id: "1234567890",
      username: "herald_dev",
      name: "Herald Dev",
      profile_image_url: "",
      subscription_type: "None",
    },
    tweets: [],
    media: [],
    authorizations: [],
    grants: [],
    processingPolls: options.processingPolls ?? 2,
    failProcessing: false,
    processingLog: [],
    appends: [],
    resetNextAppend: () => {},
    lookups: [],
    timelineReads: [],
    expireAccessTokens: () => access.forEach((t) => (t.expired = true)),
    revokeRefreshTokens: () => refresh.forEach((t) => (t.revoked = true)),
    issueTokens: (scope = "tweet.read tweet.write users.read offline.access media.write") => issue(scope),
    refreshTokenValid: (value) => {
      const entry = refresh.get(value);
      return entry !== undefined && !entry.used && !entry.revoked;
    },
  };

  function issue(scope: string): { accessToken: string; refreshToken: string } {
    const accessToken = token("xat_");
    access.set(accessToken, {
      expiresAt: now() + ACCESS_TTL_S * 1000,
      scopes: new Set(scope.split(" ")),
      expired: false,
    });
    const refreshToken = token("xrt_");
    refresh.set(refreshToken, { used: false, revoked: false, scope });
    return { accessToken, refreshToken };
  }

  const problem = (status: number, title: string, detail: string, type = "about:blank", headers = {}) =>
    json({ title, detail, type, status }, status, headers);
  const invalid = (message: string) =>
    json(
      {
        errors: [{ message }],
        title: "Invalid Request",
        detail: "One or more parameters to your request was invalid.",
        type: `${PROBLEMS}/invalid-request`,
      },
      400,
    );
  const oauthError = (status: number, error: string, description: string) =>
    json({ error, error_description: description }, status);
  const rateHeaders = () => {
    const window = created.filter((t) => t > now() - WINDOW_MS);
    const limit = options.tweetsPer15Min ?? 100;
    const reset = Math.ceil(((window[0] ?? now()) + WINDOW_MS) / 1000);
    return {
      "x-rate-limit-limit": String(limit),
      "x-rate-limit-remaining": String(Math.max(0, limit - window.length)),
      "x-rate-limit-reset": String(reset),
    };
  };

  /** GET /2/tweets allows 5,000 lookups per 15 minutes per user; the fake never runs out. */
  const lookupRateHeaders = () => ({
    "x-rate-limit-limit": "5000",
    "x-rate-limit-remaining": "4999",
    "x-rate-limit-reset": String(Math.ceil((now() + WINDOW_MS) / 1000)),
  });

  /** The scopes of the request's live access token, or null (401). */
  const bearerScopes = (request: Request): Set<string> | null => {
    const value = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const entry = value ? access.get(value) : undefined;
    if (!entry || entry.expired || entry.expiresAt <= now()) return null;
    return entry.scopes;
  };

  async function route(request: Request, url: URL): Promise<Response> {
    const { pathname } = url;
    const method = request.method;
    if (method === "GET" && pathname === "/i/oauth2/authorize") return authorize(url);
    if (method === "POST" && pathname === "/2/oauth2/token") return tokenEndpoint(request);
    const scopes = bearerScopes(request);
    if (!scopes) return problem(401, "Unauthorized", "Unauthorized");
    const needs = (scope: string) =>
      scopes.has(scope) ? null : problem(403, "Forbidden", `Missing the ${scope} scope`);
    if (method === "GET" && pathname === "/2/users/me") {
      const fields = (url.searchParams.get("user.fields") ?? "").split(",");
      const { profile_image_url, subscription_type, ...user } = fake.user;
      const asked = {
        ...user,
        ...(fields.includes("profile_image_url") ? { profile_image_url } : {}),
        ...(fields.includes("subscription_type") ? { subscription_type } : {}),
      };
      return needs("users.read") ?? json({ data: asked });
    }
    if (method === "POST" && pathname === "/2/tweets") return needs("tweet.write") ?? createTweet(request);
    if (method === "GET" && pathname === "/2/tweets")
      return needs("tweet.read") ?? needs("users.read") ?? lookupTweets(url);
    const timeline = /^\/2\/users\/([^/]+)\/tweets$/.exec(pathname);
    if (method === "GET" && timeline)
      return needs("tweet.read") ?? needs("users.read") ?? userTimeline(timeline[1]!, url);
    if (pathname === "/2/media/metadata" && method === "POST")
      return needs("media.write") ?? setMetadata(request);
    if (pathname.startsWith("/2/media/upload")) return needs("media.write") ?? media(request, url);
    return problem(
      404,
      "Not Found Error",
      `no route ${method} ${pathname}`,
      `${PROBLEMS}/resource-not-found`,
    );
  }

  function authorize(url: URL): Response {
    const q = url.searchParams;
    const redirectUri = q.get("redirect_uri") ?? "";
    if (q.get("client_id") !== fake.clientId)
      return new Response("Something went wrong: unknown client", { status: 400 });
    if (!fake.redirectUris.includes(redirectUri))
      return new Response("Something went wrong: the callback URL is not registered", { status: 400 });
    const scope = q.get("scope") ?? "";
    const challenge = q.get("code_challenge") ?? "";
    const refuse =
      q.get("response_type") !== "code"
        ? "unsupported_response_type"
        : q.get("code_challenge_method") !== "S256" || !/^[A-Za-z0-9_-]{43}$/.test(challenge)
          ? "invalid_request"
          : scope === "" || scope.split(" ").some((s) => !SCOPES.has(s))
            ? "invalid_scope"
            : !q.get("state")
              ? "invalid_request"
              : null;
    const back = new URL(redirectUri);
    if (refuse) {
      back.searchParams.set("error", refuse);
      if (q.get("state")) back.searchParams.set("state", q.get("state")!);
      return new Response(null, { status: 302, headers: { location: String(back) } });
    }
    // The signed-in user approves at once; a browser would follow this redirect.
    const code = token("code_");
    codes.set(code, {
      clientId: fake.clientId,
      redirectUri,
      challenge,
      scope,
      expiresAt: now() + CODE_TTL_MS,
    });
    fake.authorizations.push({
      clientId: fake.clientId,
      redirectUri,
      scope,
      challenge,
      state: q.get("state")!,
    });
    back.searchParams.set("state", q.get("state")!);
    back.searchParams.set("code", code);
    return new Response(null, { status: 302, headers: { location: String(back) } });
  }

  async function tokenEndpoint(request: Request): Promise<Response> {
    const basic = /^Basic (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const [clientId, clientSecret] = basic ? Buffer.from(basic, "base64").toString().split(":") : [];
    if (clientId !== fake.clientId || clientSecret !== fake.clientSecret)
      return oauthError(401, "unauthorized_client", "Missing valid authorization header");
    if (!(request.headers.get("content-type") ?? "").includes("application/x-www-form-urlencoded"))
      return oauthError(400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded");
    const body = new URLSearchParams(await request.text());
    if (body.get("client_id") !== null && body.get("client_id") !== fake.clientId)
      return oauthError(400, "invalid_request", "client_id does not match the authorization header");
    const grantType = body.get("grant_type");
    if (grantType === "authorization_code") {
      const code = body.get("code") ?? "";
      const grant = codes.get(code);
      codes.delete(code); // single-use, even when the exchange fails
      const verifier = body.get("code_verifier") ?? "";
      const verified = grant && createHash("sha256").update(verifier).digest("base64url") === grant.challenge;
      if (!grant || grant.expiresAt <= now() || grant.redirectUri !== body.get("redirect_uri") || !verified)
        return oauthError(400, "invalid_request", "Value passed for the authorization code was invalid.");
      return tokens(grant.scope, "authorization_code", null);
    }
    if (grantType === "refresh_token") {
      const used = body.get("refresh_token") ?? "";
      const entry = refresh.get(used);
      if (!entry || entry.used || entry.revoked)
        return oauthError(400, "invalid_request", "Value passed for the token was invalid.");
      entry.used = true; // rotation: the old refresh token dies with this answer
      return tokens(entry.scope, "refresh_token", used);
    }
    return oauthError(400, "unsupported_grant_type", "grant_type is not supported");
  }

  function tokens(scope: string, grantType: string, usedRefresh: string | null): Response {
    const pair = issue(scope);
    const offline = scope.split(" ").includes("offline.access");
    if (!offline) refresh.delete(pair.refreshToken);
    fake.grants.push({ grantType, refreshToken: usedRefresh, issued: pair.accessToken });
    return json({
      token_type: "bearer",
      expires_in: ACCESS_TTL_S,
      access_token: pair.accessToken,
      scope,
      ...(offline ? { refresh_token: pair.refreshToken } : {}),
    });
  }

  async function createTweet(request: Request): Promise<Response> {
    const body = (await request.json().catch(() => null)) as Record<string, any> | null;
    if (!body) return invalid("The request body is not JSON");
    const window = created.filter((t) => t > now() - WINDOW_MS);
    if (window.length >= (options.tweetsPer15Min ?? 100))
      return problem(429, "Too Many Requests", "Too Many Requests", "about:blank", rateHeaders());
    const text = typeof body.text === "string" ? body.text : "";
    const mediaIds: string[] = Array.isArray(body.media?.media_ids) ? body.media.media_ids.map(String) : [];
    if (text === "" && mediaIds.length === 0) return invalid("Post text or media is required");
    // Subscribers (Basic, Premium, Premium+) may post long posts of up to 25,000 weighted characters.
    const longPosts = ["Basic", "Premium", "PremiumPlus"].includes(fake.user.subscription_type);
    if (weightedLength(text) > (longPosts ? 25_000 : 280)) return invalid("Your Tweet text is too long.");
    if (mediaIds.length > 4) return invalid("Your media IDs are invalid: a post takes a maximum of 4 items.");
    const attached = mediaIds.map((m) => fake.media.find((x) => x.id === m));
    if (attached.some((m) => !m || m.bytes === null)) return invalid("Your media IDs are invalid.");
    if (attached.some((m) => m!.state !== null && m!.state !== "succeeded"))
      return invalid("Your media IDs are invalid: processing has not finished.");
    if (attached.some((m) => m!.category !== "tweet_image") && attached.length > 1)
      return invalid("A post takes one GIF or video and nothing else.");
    const replyTo = body.reply?.in_reply_to_tweet_id ? String(body.reply.in_reply_to_tweet_id) : null;
    if (replyTo && !fake.tweets.some((t) => t.id === replyTo))
      return invalid("The post you are replying to has been deleted or is not visible to you.");
    if (text !== "" && fake.tweets.some((t) => t.authorId === fake.user.id && t.text === text))
      return problem(403, "Forbidden", "You are not allowed to create a Tweet with duplicate content.");
    const tweet: FakeTweet = { id: id(), text, mediaIds, replyTo, authorId: fake.user.id, createdAt: now() };
    fake.tweets.push(tweet);
    created.push(now());
    for (const m of attached) m!.attached = true;
    if (fake.hangAfterReceive) return never();
    return json({ data: { id: tweet.id, text, edit_history_tweet_ids: [tweet.id] } }, 201, rateHeaders());
  }

  /**
   * GET /2/tweets?ids=: up to 100 posts with the fields asked for. Posts the fake does not hold are
   * `resource-not-found` errors beside the data; non-public metrics of a post that is not the user's
   * or is 30 days old are left out with a `not-authorized-for-field` error (the post stays in data).
   */
  function lookupTweets(url: URL): Response {
    const q = url.searchParams;
    const ids = (q.get("ids") ?? "").split(",").filter(Boolean);
    if (ids.length === 0 || ids.length > 100)
      return invalid("The `ids` query parameter value must be a list of 1 to 100 ids");
    const bad = ids.find((v) => !/^\d{1,19}$/.test(v));
    if (bad) return invalid(`The \`ids\` query parameter value [${bad}] is not valid`);
    const fields = (q.get("tweet.fields") ?? "").split(",").filter(Boolean);
    const unknownField = fields.find((f) => !TWEET_FIELDS.has(f));
    if (unknownField)
      return invalid(`The \`tweet.fields\` query parameter value [${unknownField}] is not valid`);
    const expansions = (q.get("expansions") ?? "").split(",").filter(Boolean);
    const mediaFields = (q.get("media.fields") ?? "").split(",").filter(Boolean);
    fake.lookups.push({ ids, fields });
    const data: Record<string, unknown>[] = [];
    const errors: Record<string, unknown>[] = [];
    const media: Record<string, unknown>[] = [];
    for (const tweetId of ids) {
      const tweet = fake.tweets.find((t) => t.id === tweetId);
      if (!tweet) {
        errors.push({
          value: tweetId,
          detail: `Could not find tweet with ids: [${tweetId}].`,
          title: "Not Found Error",
          resource_type: "tweet",
          parameter: "ids",
          resource_id: tweetId,
          type: `${PROBLEMS}/resource-not-found`,
        });
        continue;
      }
      const c = tweet.counts ?? {};
      const out: Record<string, unknown> = {
        id: tweet.id,
        text: tweet.text,
        edit_history_tweet_ids: [tweet.id],
      };
      if (fields.includes("created_at")) out.created_at = new Date(tweet.createdAt).toISOString();
      if (fields.includes("author_id")) out.author_id = tweet.authorId;
      if (fields.includes("public_metrics"))
        out.public_metrics = {
          retweet_count: c.retweets ?? 0,
          reply_count: c.replies ?? 0,
          like_count: c.likes ?? 0,
          quote_count: c.quotes ?? 0,
          bookmark_count: c.bookmarks ?? 0,
          impression_count: c.impressions ?? 0,
        };
      for (const field of ["non_public_metrics", "organic_metrics"] as const) {
        if (!fields.includes(field)) continue;
        const readable = tweet.authorId === fake.user.id && now() - tweet.createdAt < NON_PUBLIC_MS;
        if (!readable) {
          errors.push({
            value: tweet.id,
            detail: `Sorry, you are not authorized to access '${field}' on the Tweet with ids: ${tweet.id}.`,
            title: "Field Authorization Error",
            resource_type: "tweet",
            parameter: "tweet.fields",
            field,
            resource_id: tweet.id,
            section: "data",
            type: `${PROBLEMS}/not-authorized-for-field`,
          });
          continue;
        }
        const hasLink = /https?:\/\//.test(tweet.text);
        out[field] = {
          impression_count: c.nonPublicImpressions ?? 0,
          user_profile_clicks: c.profileClicks ?? 0,
          ...(hasLink ? { url_link_clicks: c.linkClicks ?? 0 } : {}),
          ...(field === "organic_metrics"
            ? { retweet_count: c.retweets ?? 0, reply_count: c.replies ?? 0, like_count: c.likes ?? 0 }
            : {}),
        };
      }
      const attached = tweet.mediaIds
        .map((m) => fake.media.find((x) => x.id === m))
        .filter((m): m is FakeMedia => m !== undefined);
      if (expansions.includes("attachments.media_keys") && attached.length > 0) {
        out.attachments = { media_keys: attached.map((m) => m.mediaKey) };
        for (const m of attached) {
          const type =
            m.category === "tweet_video" ? "video" : m.category === "tweet_gif" ? "animated_gif" : "photo";
          media.push({
            media_key: m.mediaKey,
            type,
            ...(mediaFields.includes("public_metrics") && type === "video"
              ? { public_metrics: { view_count: c.videoViews ?? 0 } }
              : {}),
          });
        }
      }
      data.push(out);
    }
    return json(
      {
        ...(data.length > 0 ? { data } : {}),
        ...(media.length > 0 ? { includes: { media } } : {}),
        ...(errors.length > 0 ? { errors } : {}),
      },
      200,
      lookupRateHeaders(),
    );
  }

  /**
   * GET /2/users/:id/tweets: the user's posts, newest first, from `start_time` on (ISO 8601, to the
   * second, inclusive), `max_results` 5–100 (default 10) a page, `pagination_token` for the next page
   * (`meta.next_token` while more remain). Texts as X stores them: `&`, `<`, `>` as HTML entities, each
   * URL replaced by a t.co link and a t.co link appended per attached media (`entities.urls`).
   */
  function userTimeline(userId: string, url: URL): Response {
    const q = url.searchParams;
    const max = Number(q.get("max_results") ?? 10);
    if (!Number.isInteger(max) || max < 5 || max > 100)
      return invalid("The `max_results` query parameter value must be between 5 and 100");
    const startRaw = q.get("start_time");
    const start = startRaw === null ? Number.NEGATIVE_INFINITY : Date.parse(startRaw);
    if (
      startRaw !== null &&
      (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{3})?Z$/.test(startRaw) || Number.isNaN(start))
    )
      return invalid(`The \`start_time\` query parameter value [${startRaw}] is not a valid time`);
    const fields = (q.get("tweet.fields") ?? "").split(",").filter(Boolean);
    const unknownField = fields.find((f) => !TWEET_FIELDS.has(f));
    if (unknownField)
      return invalid(`The \`tweet.fields\` query parameter value [${unknownField}] is not valid`);
    if (userId !== fake.user.id)
      return json(
        {
          errors: [
            {
              value: userId,
              detail: `Could not find user with id: [${userId}].`,
              title: "Not Found Error",
              resource_type: "user",
              parameter: "id",
              resource_id: userId,
              type: `${PROBLEMS}/resource-not-found`,
            },
          ],
        },
        200,
      );
    fake.timelineReads.push({ userId, startTime: startRaw, token: q.get("pagination_token") });
    const all = fake.tweets
      .filter((t) => t.authorId === userId && t.createdAt >= start)
      .toSorted((a, b) => b.createdAt - a.createdAt || (BigInt(b.id) > BigInt(a.id) ? 1 : -1));
    const offset = q.get("pagination_token") ? Number.parseInt(q.get("pagination_token")!.slice(3), 36) : 0;
    if (!Number.isInteger(offset) || offset < 0 || offset > all.length)
      return invalid("The `pagination_token` query parameter value is not valid");
    const page = all.slice(offset, offset + max);
    const more = offset + max < all.length;
    const data = page.map((tweet) => {
      const stored = storedText(tweet);
      // A long post (over 280 weighted characters) reads as its first part; the whole is its note_tweet.
      const long = weightedLength(tweet.text) > 280;
      const out: Record<string, unknown> = {
        id: tweet.id,
        text: long ? `${[...stored.text].slice(0, 270).join("")}…` : stored.text,
        ...(long && fields.includes("note_tweet") ? { note_tweet: { text: stored.text } } : {}),
        edit_history_tweet_ids: [tweet.id],
      };
      if (fields.includes("created_at")) out.created_at = new Date(tweet.createdAt).toISOString();
      if (fields.includes("author_id")) out.author_id = tweet.authorId;
      if (fields.includes("referenced_tweets") && tweet.replyTo)
        out.referenced_tweets = [{ type: "replied_to", id: tweet.replyTo }];
      if (fields.includes("attachments") && tweet.mediaIds.length > 0)
        out.attachments = {
          media_keys: tweet.mediaIds.map((m) => fake.media.find((x) => x.id === m)?.mediaKey ?? `3_${m}`),
        };
      if (fields.includes("entities") && stored.urls.length > 0) out.entities = { urls: stored.urls };
      return out;
    });
    return json(
      {
        ...(data.length > 0 ? { data } : {}),
        meta: {
          result_count: data.length,
          ...(data.length > 0 ? { newest_id: page[0]!.id, oldest_id: page.at(-1)!.id } : {}),
          ...(more ? { next_token: `7p_${(offset + max).toString(36)}` } : {}),
        },
      },
      200,
      {
        "x-rate-limit-limit": "900",
        "x-rate-limit-remaining": "899",
        "x-rate-limit-reset": String(Math.ceil((now() + WINDOW_MS) / 1000)),
      },
    );
  }

  /** A post's text as X keeps it: entities escaped, URLs and attached media as t.co links. */
  function storedText(tweet: FakeTweet): { text: string; urls: Record<string, unknown>[] } {
    const urls: Record<string, unknown>[] = [];
    const shortLink = () =>
      `https://t.co/${createHash("sha256").update(`${tweet.id}:${urls.length}`).digest("hex").slice(0, 10)}`;
    let text = "";
    let last = 0;
    for (const match of tweet.text.matchAll(/https?:\/\/\S+/g)) {
      text += escapeEntities(tweet.text.slice(last, match.index));
      const link = shortLink();
      urls.push({
        start: [...text].length,
        end: [...text].length + link.length,
        url: link,
        expanded_url: match[0],
        display_url: match[0].replace(/^https?:\/\//, ""),
      });
      text += link;
      last = match.index + match[0].length;
    }
    text += escapeEntities(tweet.text.slice(last));
    for (const mediaId of tweet.mediaIds) {
      const link = shortLink();
      const start = [...text].length + (text === "" ? 0 : 1);
      text += `${text === "" ? "" : " "}${link}`;
      const m = fake.media.find((x) => x.id === mediaId);
      urls.push({
        start,
        end: start + link.length,
        url: link,
        expanded_url: `https://x.com/${fake.user.username}/status/${tweet.id}/photo/1`,
        display_url: "pic.x.com/media",
        media_key: m?.mediaKey,
      });
    }
    return { text, urls };
  }

  async function setMetadata(request: Request): Promise<Response> {
    const body = (await request.json().catch(() => null)) as Record<string, any> | null;
    const target = fake.media.find((m) => m.id === String(body?.id ?? ""));
    if (!target) return invalid("media id not found");
    const text = body?.metadata?.alt_text?.text;
    if (typeof text !== "string" || [...text].length > 1000)
      return invalid("alt_text.text must be 1 to 1000 characters");
    target.altText = text;
    return json({ data: { id: target.id, associated_metadata: { alt_text: { text } } } });
  }

  async function media(request: Request, url: URL): Promise<Response> {
    const { pathname } = url;
    if (request.method === "GET" && pathname === "/2/media/upload") {
      if (url.searchParams.get("command") !== "STATUS") return invalid("command must be STATUS");
      const target = fake.media.find((m) => m.id === url.searchParams.get("media_id"));
      if (!target)
        return problem(404, "Not Found Error", "media id not found", `${PROBLEMS}/resource-not-found`);
      advance(target);
      fake.processingLog.push({ mediaId: target.id, via: "status", state: String(target.state) });
      return json({ data: mediaJson(target) });
    }
    if (request.method !== "POST") return invalid(`${request.method} is not supported here`);
    if (pathname === "/2/media/upload/initialize") return initialize(await fields(request));
    const step = /^\/2\/media\/upload\/([^/]+)\/(append|finalize)$/.exec(pathname);
    if (step) {
      const target = fake.media.find((m) => m.id === step[1]);
      if (!target) return invalid("media id not found");
      return step[2] === "append" ? append(target, await fields(request), request) : finalize(target);
    }
    if (pathname !== "/2/media/upload") return invalid(`no media route ${pathname}`);
    const form = await fields(request);
    const command = form.command?.text;
    if (command === "INIT") return initialize(form);
    if (command === "APPEND" || command === "FINALIZE") {
      const target = fake.media.find((m) => m.id === form.media_id?.text);
      if (!target) return invalid("media id not found");
      return command === "APPEND" ? append(target, form, request) : finalize(target);
    }
    if (command !== undefined) return invalid(`unknown command ${command}`);
    return simpleUpload(request, form);
  }

  function simpleUpload(request: Request, form: Fields): Response {
    const isJson = (request.headers.get("content-type") ?? "").includes("application/json");
    const file = form.media;
    if (!file) return invalid("media is required");
    const bytes = isJson ? new Uint8Array(Buffer.from(file.text, "base64")) : file.bytes;
    const category = form.media_category?.text ?? "tweet_image";
    if (category !== "tweet_image") return invalid(`${category} needs the chunked upload`);
    const mediaType = form.media_type?.text ?? file.type ?? "application/octet-stream";
    if (!["image/jpeg", "image/png", "image/webp", "image/gif"].includes(mediaType))
      return invalid(`media_type ${mediaType} is not an image`);
    if (bytes.length > MAX_BYTES.tweet_image!) return invalid("File size exceeds 5242880 bytes.");
    const m = newMedia({ mediaType, category, totalBytes: bytes.length });
    m.bytes = bytes;
    return json({ data: { ...mediaJson(m), image: { image_type: mediaType, w: 0, h: 0 } } });
  }

  function initialize(form: Fields): Response {
    const mediaType = form.media_type?.text ?? "";
    const totalBytes = Number(form.total_bytes?.text ?? Number.NaN);
    const category =
      form.media_category?.text ?? (mediaType.startsWith("video/") ? "tweet_video" : "tweet_image");
    if (!MAX_BYTES[category]) return invalid(`media_category ${category} is not supported`);
    if (!Number.isInteger(totalBytes) || totalBytes <= 0) return invalid("total_bytes is required");
    if (totalBytes > MAX_BYTES[category]!) return invalid(`File size exceeds ${MAX_BYTES[category]} bytes.`);
    const m = newMedia({ mediaType, category, totalBytes });
    return json({ data: { id: m.id, media_key: m.mediaKey, expires_after_secs: EXPIRES_AFTER_SECS } });
  }

  function append(target: FakeMedia, form: Fields, request: Request): Response {
    const index = Number(form.segment_index?.text ?? Number.NaN);
    if (target.bytes !== null) return invalid("the upload is finalized");
    if (!Number.isInteger(index) || index < 0 || index > 999)
      return invalid("segment_index must be 0 to 999");
    if (!form.media) return invalid("media is required");
    target.segments.set(index, form.media.bytes);
    const fresh = onFreshConnection(Object.fromEntries(request.headers));
    fake.appends.push({ mediaId: target.id, segment: index, cut: false, fresh });
    return json({ data: { expires_at: Math.floor(now() / 1000) + EXPIRES_AFTER_SECS } });
  }

  function finalize(target: FakeMedia): Response {
    if (target.bytes !== null) return invalid("the upload is finalized");
    const ordered = [...target.segments.entries()].sort(([a], [b]) => a - b).map(([, b]) => b);
    const bytes = new Uint8Array(Buffer.concat(ordered));
    if (bytes.length !== target.totalBytes)
      return invalid(`File size mismatch: received ${bytes.length} of ${target.totalBytes} bytes.`);
    target.bytes = bytes;
    if (target.category !== "tweet_image" && fake.processingPolls > 0) {
      target.state = "pending";
      target.pollsLeft = fake.processingPolls;
      target.fails = fake.failProcessing;
      fake.processingLog.push({ mediaId: target.id, via: "finalize", state: target.state });
    }
    return json({ data: { ...mediaJson(target), size: bytes.length } });
  }

  function newMedia(input: { mediaType: string; category: string; totalBytes: number }): FakeMedia {
    const mediaId = id();
    const m: FakeMedia = {
      id: mediaId,
      mediaKey: `${input.category === "tweet_image" ? 3 : input.category === "tweet_gif" ? 16 : 13}_${mediaId}`,
      ...input,
      segments: new Map(),
      bytes: null,
      state: null,
      pollsLeft: 0,
      fails: false,
      altText: null,
      attached: false,
    };
    fake.media.push(m);
    return m;
  }

  /** One STATUS poll moves processing on: in_progress until the last poll, then succeeded (or failed). */
  function advance(m: FakeMedia): void {
    if (m.state === null || m.state === "succeeded" || m.state === "failed") return;
    m.pollsLeft -= 1;
    m.state = m.pollsLeft > 0 ? "in_progress" : m.fails ? "failed" : "succeeded";
  }

  function mediaJson(m: FakeMedia) {
    const done = m.state === "succeeded" || m.state === "failed";
    const info =
      m.state === null
        ? undefined
        : {
            state: m.state,
            ...(done ? {} : { check_after_secs: 1 }),
            progress_percent: m.state === "succeeded" ? 100 : m.state === "pending" ? 0 : 50,
            ...(m.state === "failed"
              ? { error: { code: 1, name: "InvalidMedia", message: "Unsupported video format" } }
              : {}),
          };
    return {
      id: m.id,
      media_key: m.mediaKey,
      size: m.totalBytes,
      expires_after_secs: EXPIRES_AFTER_SECS,
      ...(info ? { processing_info: info } : {}),
    };
  }

  const server = serveFake({
    controls: fake,
    failures,
    route,
    defaultFailure: (status) => {
      if (status === 429) {
        const reset = String(Math.ceil((now() + WINDOW_MS) / 1000));
        return {
          body: { title: "Too Many Requests", detail: "Too Many Requests", type: "about:blank", status },
          headers: {
            "x-rate-limit-limit": "100",
            "x-rate-limit-remaining": "0",
            "x-rate-limit-reset": reset,
          },
        };
      }
      if (status === 401)
        return { body: { title: "Unauthorized", type: "about:blank", status, detail: "Unauthorized" } };
      if (status === 403)
        return { body: { title: "Forbidden", type: "about:blank", status, detail: "Forbidden" } };
      if (status === 503)
        return {
          body: { title: "Service Unavailable", detail: "Service Unavailable", type: "about:blank", status },
        };
      return {
        body: {
          title: status >= 500 ? "Internal Server Error" : "Bad Request",
          detail: "Something went wrong",
          type: "about:blank",
          status,
        },
      };
    },
  });
  const { cuts, origin, stop } = await behindCutProxy(server, options.cuttable);
  fake.origin = origin;
  fake.stop = stop;
  fake.resetNextAppend = ({ keepBytes }) => {
    cutProxyFor(cuts, "resetNextAppend").cutNext({
      keepBytes,
      match: ({ method, target }) => method === "POST" && /^\/2\/media\/upload\/[^/]+\/append/.test(target),
      onCut: ({ target, headers }) => {
        const mediaId = /^\/2\/media\/upload\/([^/]+)\//.exec(target)![1]!;
        fake.appends.push({ mediaId, segment: null, cut: true, fresh: onFreshConnection(headers) });
      },
    });
  };
  fake.user.profile_image_url = `${server.origin}/profile_images/herald_normal.png`;
  return fake;
}

/** `&`, `<` and `>` as X writes them in post text. */
function escapeEntities(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** One field of a request body: its text, its exact bytes and (for files) its content type. */
interface Field {
  text: string;
  bytes: Uint8Array;
  type: string | null;
}
type Fields = Record<string, Field>;

/** A JSON, urlencoded or multipart body as fields; multipart parts keep their exact bytes. */
async function fields(request: Request): Promise<Fields> {
  const type = request.headers.get("content-type") ?? "";
  const raw = new Uint8Array(await request.arrayBuffer());
  const field = (value: unknown, bytes?: Uint8Array, partType: string | null = null): Field => {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return { text, bytes: bytes ?? new TextEncoder().encode(text), type: partType };
  };
  if (type.includes("application/json")) {
    try {
      const body = JSON.parse(new TextDecoder().decode(raw)) as Record<string, unknown>;
      return Object.fromEntries(
        Object.entries(body ?? {}).map(([k, v]) => [k, field(typeof v === "number" ? String(v) : v)]),
      );
    } catch {
      return {};
    }
  }
  if (type.includes("application/x-www-form-urlencoded"))
    return Object.fromEntries(
      [...new URLSearchParams(new TextDecoder().decode(raw))].map(([k, v]) => [k, field(v)]),
    );
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1];
  if (!type.includes("multipart/form-data") || !boundary) return {};
  const body = Buffer.from(raw);
  const delimiter = Buffer.from(`--${boundary}`);
  const out: Fields = {};
  let at = body.indexOf(delimiter);
  while (at !== -1) {
    const start = at + delimiter.length;
    if (body.subarray(start, start + 2).toString() === "--") break; // the closing delimiter
    const next = body.indexOf(delimiter, start);
    if (next === -1) break;
    const part = body.subarray(start + 2, next - 2); // after the CRLF, before the CRLF that ends the part
    const split = part.indexOf("\r\n\r\n");
    const headers = part.subarray(0, split).toString("latin1");
    const bytes = new Uint8Array(part.subarray(split + 4));
    const name = /name="([^"]*)"/i.exec(headers)?.[1];
    const partType = /content-type:\s*([^\r\n;]+)/i.exec(headers)?.[1]?.trim() ?? null;
    if (name !== undefined) out[name] = { text: new TextDecoder().decode(bytes), bytes, type: partType };
    at = next;
  }
  return out;
}
