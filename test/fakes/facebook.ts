// A faithful local fake of graph.facebook.com for Facebook Pages and Instagram through Facebook Login
// (providers.md §5, §6, §14): the Login dialog, code → short-lived user token → long-lived user token
// (fb_exchange_token), /me/accounts with Page tokens and linked Instagram accounts (paged), Page feed
// posts (with duplicate detection), photos (published, or unpublished then attached_media), reels
// (video_reels start → bytes to the upload URL → finish → status while processing), Instagram media
// containers with a status_code state machine, media pulled from image_url / video_url (really
// downloaded), carousels, media_publish (once per container), permalinks, content_publishing_limit,
// and Graph error bodies (190, throttling with X-Business-Use-Case-Usage, code 2 that still creates).
// Numbers: a Page post's counts (`shares` left out when nobody shared, `comments` / `reactions` with
// `.summary(true)`), several nodes at once (`GET /?ids=a,b&fields=…`, at most 50, all or nothing),
// Page post insights (only on Pages with 100 likes or more; unknown metric names refused), and an
// Instagram media's insights (code 10 "Not enough viewers", an empty answer) and like/comment counts.
import { EXPIRED_TOKEN, graphError, graphPage, metaDefaultFailure } from "./meta.ts";
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

/** An Instagram professional account linked to a Page. */
export interface FakeInstagramAccount {
  id: string;
  username: string;
  name: string;
  profile_picture_url: string;
}

/** A Page the signed-in person manages. */
export interface FakePage {
  id: string;
  name: string;
  username: string | null;
  instagram: FakeInstagramAccount | null;
  /** The Page's likes (default 500): Meta shows Page and post insights only from 100 likes on. */
  likes?: number;
}

/** A Page post's numbers (tests set these; GET /{post}, its insights and its reel's node read them). */
export interface FakeFacebookCounts {
  comments?: number;
  /** Left out of the post node when 0 (Graph omits `shares` for a post nobody shared). */
  shares?: number;
  /** Reactions by type (like, love, wow, haha, sorry, anger, care); zeros are left out. */
  reactions?: Partial<Record<string, number>>;
  /** Insight `post_media_view`. */
  mediaViews?: number;
  /** Insight `post_total_media_view_unique` (reach). */
  uniqueMediaViews?: number;
  /** Insight `post_clicks_by_type`, e.g. {"link clicks": 4, "other clicks": 9}; zeros are left out. */
  clicks?: Partial<Record<string, number>>;
}

/** The metrics of an Instagram media's insights the fake knows (those deprecated in v22 are refused). */
export const FAKE_IG_MEDIA_METRICS = [
  "views",
  "reach",
  "likes",
  "comments",
  "shares",
  "saved",
  "total_interactions",
  "follows",
  "profile_visits",
] as const;

/** The Page post insights the fake knows (the 2025 deprecations, e.g. post_impressions, are refused). */
export const FAKE_POST_METRICS = [
  "post_media_view",
  "post_total_media_view_unique",
  "post_reactions_by_type_total",
  "post_clicks",
  "post_clicks_by_type",
] as const;

/** A Page post (text, link, photos, or the post of a published reel). */
export interface FakeFacebookPost {
  id: string;
  pageId: string;
  kind: "status" | "link" | "photo" | "photos" | "reel";
  message: string;
  link: string | null;
  /** Photos shown by the post (attached_media, or the published photo). */
  photoIds: string[];
  videoId: string | null;
  permalink: string;
  createdAt: number;
  /** Its numbers (tests set these); absent ones are 0. */
  counts?: FakeFacebookCounts;
}

/** A photo uploaded to a Page. */
export interface FakePhoto {
  id: string;
  pageId: string;
  published: boolean;
  contentType: string;
  bytes: number;
  /** The post it appears in (published at once, or attached later); null while unattached. */
  postId: string | null;
}

/** How a reel ends once processed: published, or a configured error / expiry. */
export type ReelEnd = { state: "published" } | { state: "error"; message: string } | { state: "expired" };

/** A reel upload session and what became of it. */
export interface FakeReel {
  id: string;
  pageId: string;
  /** Bytes received at the upload URL, and the headers sent with them. */
  received: number;
  uploadHeaders: { authorization: string; offset: string; fileSize: string } | null;
  /** The file as received so far (its first `received` bytes), once an upload began. */
  bytes: Uint8Array | null;
  /** Every POST to the upload URL: its `offset`, the body bytes that arrived, and whether it was cut. */
  uploads: { offset: number; length: number; cut: boolean; fresh: boolean }[];
  finished: boolean;
  videoState: string | null;
  description: string | null;
  phase: "created" | "uploaded" | "processing" | "published" | "error" | "expired";
  pollsLeft: number;
  end: ReelEnd;
  postId: string | null;
}

/** How an Instagram container ends once processed: FINISHED normally, or a configured ERROR / EXPIRED. */
export type ContainerEnd = { code: "FINISHED" } | { code: "ERROR"; status: string } | { code: "EXPIRED" };

/** An Instagram media container. */
export interface FakeContainer {
  id: string;
  igId: string;
  mediaType: "IMAGE" | "VIDEO" | "REELS" | "CAROUSEL";
  caption: string | null;
  mediaUrl: string | null;
  isCarouselItem: boolean;
  children: string[];
  altText: string | null;
  statusCode: "IN_PROGRESS" | "FINISHED" | "ERROR" | "EXPIRED" | "PUBLISHED";
  status: string | null;
  pollsLeft: number;
  end: ContainerEnd;
  /** What the fake downloaded from `mediaUrl`. */
  download: { status: number; contentType: string | null; bytes: number } | null;
  mediaId: string | null;
  createdAt: number;
  /** media_publish calls still answered 9007/2207027 ("not ready, please wait") once it is FINISHED. */
  notReadyAnswers: number;
}

/** A published Instagram post. */
export interface FakeInstagramPost {
  id: string;
  igId: string;
  containerId: string;
  mediaType: "IMAGE" | "VIDEO" | "CAROUSEL_ALBUM";
  caption: string;
  children: string[];
  shortcode: string;
  permalink: string;
  timestamp: number;
  /** Its insights and counts (tests set these); absent ones are 0. */
  counts?: Partial<Record<(typeof FAKE_IG_MEDIA_METRICS)[number], number>>;
  /**
   * What its insights answer: the numbers (default), code 10 "Not enough viewers", or an empty
   * `data` (Meta's answer while it has nothing to show).
   */
  insights?: "available" | "not_enough_viewers" | "empty";
}

/** A token the fake issued. */
export interface FakeToken {
  kind: "short" | "long" | "page";
  /** The Page a Page token acts for. */
  pageId: string | null;
  scopes: string[];
  issuedAt: number;
  expiresAt: number;
  revoked: boolean;
}

/** A comment on a Page post or an Instagram media, as Graph stores it. */
export interface FakeComment {
  id: string;
  /** The Page post or Instagram media commented on. */
  objectId: string;
  /** Who commented: the Page (id, name) or the Instagram account (id, username). */
  fromId: string;
  fromName: string;
  message: string;
  createdAt: number;
}

/** Settings of the fake; `now` decides token ages, container expiry and the 24 h windows. */
export interface FacebookFakeOptions {
  /** The Pages the person manages (default: three, two of them with an Instagram account). */
  pages?: FakePage[];
  /** Pages per /me/accounts answer (default 25). */
  pageSize?: number;
  /** Status polls an Instagram image or video container answers IN_PROGRESS (default 2). */
  mediaProcessingPolls?: number;
  /** Status reads a reel answers "processing" after finish (default 2). */
  reelProcessingPolls?: number;
  /** Instagram API posts per account per 24 h (default 100). */
  quotaTotal?: number;
  /**
   * media_publish calls each new Instagram container answers 9007/2207027 ("not ready for publishing,
   * please wait") after its status reads FINISHED, before it publishes (default 0).
   */
  notReadyAfterFinished?: number;
  /** Redirect URIs the app accepts; null (default) accepts any. */
  redirectUris?: string[] | null;
  now?: () => number;
  /** Serve through the cut proxy (test/fakes/shared.ts), so a reel upload can be reset mid-body. */
  cuttable?: boolean;
}

/** The running fake: its origin, what it stored, and its switches. */
export interface FacebookFake extends FakeControls {
  origin: string;
  stop(): Promise<void>;
  app: { clientId: string; clientSecret: string; redirectUris: string[] | null };
  pages: FakePage[];
  /** The dialog requests it answered (query parameters). */
  authorizations: Record<string, string>[];
  tokens: Map<string, FakeToken>;
  posts: FakeFacebookPost[];
  photos: FakePhoto[];
  reels: FakeReel[];
  containers: FakeContainer[];
  igPosts: FakeInstagramPost[];
  /** Comments made through `POST /{object-id}/comments` (first comments), oldest first. */
  comments: FakeComment[];
  /** Objects whose comments are turned off: a comment on them answers Meta's refusal. */
  commentsClosed: Set<string>;
  mediaProcessingPolls: number;
  reelProcessingPolls: number;
  quotaTotal: number;
  /** See `FacebookFakeOptions.notReadyAfterFinished`; read when a container is created. */
  notReadyAfterFinished: number;
  /**
   * The Instagram accounts suspected of spam: their media_publish answers 4/2207051 ("We restrict
   * certain activity to protect our community"), Meta's refusal of the publishing action.
   */
  restrictedForSpam: Set<string>;
  /** Instagram media_publish requests answered, whatever the answer. */
  publishCalls: number;
  /** Insight metric names this Graph refuses as invalid (e.g. "post_media_view", unverified at post level). */
  unknownInsightMetrics: Set<string>;
  /** Every multi-id read (`GET /?ids=…`): the ids asked and the fields. */
  multiReads: { ids: string[]; fields: string }[];
  /** The next reel finished ends this way instead of published. */
  nextReelEnds(end: ReelEnd): void;
  /**
   * The connection of the next POST to a reel's upload URL is reset once `keepBytes` of its body
   * arrived (needs `cuttable`). Meta keeps what arrived: the reel's status reports it as the
   * uploading phase's `bytes_transferred`, and an upload resumes with `offset` set to it.
   */
  resetNextReelUpload(input: { keepBytes: number }): void;
  /** The next container created ends this way instead of FINISHED. */
  nextContainerEnds(end: ContainerEnd): void;
  /** Every reel and container still processing is processed now. */
  finishProcessing(): void;
  /** The next `n` creates (feed, published photo, reel finish, media_publish) are stored, then answer 500 code 2. */
  createThenFail(n: number): void;
  /** Tokens issued so far (or those `which` picks) answer code 190 from now on. */
  revokeTokens(which?: (t: FakeToken, value: string) => boolean): void;
  /** A Page token as /me/accounts would give it, for tests that build destinations by hand. */
  issuePageToken(pageId: string, scopes?: string[]): string;
}

const DAY_MS = 24 * 60 * 60_000;
const SHORT_TTL_MS = 2 * 60 * 60_000;
const LONG_TTL_S = 5_183_944;
const VERSION = /^\/v\d+\.\d+(\/.*)$/;
const ALL_SCOPES = [
  "pages_show_list",
  "pages_manage_posts",
  "pages_read_engagement",
  "read_insights",
  "instagram_basic",
  "instagram_content_publish",
  "instagram_manage_insights",
  "business_management",
  "pages_manage_engagement",
  "instagram_manage_comments",
];
const PAGE_FIELDS = new Set([
  "id",
  "name",
  "access_token",
  "username",
  "picture",
  "instagram_business_account",
  "tasks",
  "category",
]);
const POST_FIELDS = new Set([
  "id",
  "message",
  "permalink_url",
  "created_time",
  "shares",
  "comments",
  "reactions",
]);
const VIDEO_FIELDS = new Set(["id", "status", "permalink_url", "description", "comments", "reactions"]);
const CONTAINER_FIELDS = new Set(["id", "status_code", "status"]);
const IG_MEDIA_FIELDS = new Set([
  "id",
  "caption",
  "timestamp",
  "permalink",
  "media_type",
  "shortcode",
  "like_count",
  "comments_count",
]);
/** Ids one multi-id read takes. */
const MAX_IDS = 50;
const IG_USER_FIELDS = new Set(["id", "username", "name", "profile_picture_url", "followers_count"]);

/** The default Pages: a café with Instagram, a lab without, a bookshop with. */
function defaultPages(origin: string): FakePage[] {
  const ig = (id: string, username: string, name: string): FakeInstagramAccount => ({
    id,
    username,
    name,
    profile_picture_url: `${origin}/pictures/${username}.jpg`,
  });
  return [
    {
      id: "101000000000001",
      name: "Herald Café",
      username: "heraldcafe",
      instagram: ig("17841400000000001", "herald.cafe", "Herald Café"),
    },
    { id: "101000000000002", name: "Herald Labs", username: null, instagram: null },
    {
      id: "101000000000003",
      name: "Herald Books",
      username: "heraldbooks",
      instagram: ig("17841400000000003", "heraldbooks", "Herald Books"),
    },
  ];
}

/** Graph time: ISO 8601 with a `+0000` offset. */
function graphTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+0000");
}

/** `a,b.summary(true).limit(0),c{d,e}` → its top-level fields (commas inside () or {} stay). */
function splitFields(fields: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of fields) {
    if (ch === "(" || ch === "{") depth++;
    if (ch === ")" || ch === "}") depth--;
    if (ch === "," && depth === 0) {
      out.push(current.trim());
      current = "";
    } else current += ch;
  }
  if (current.trim() !== "") out.push(current.trim());
  return out;
}

/** A field's name without Graph's modifiers (`.summary(true)`, `{subfields}`). */
function fieldName(field: string): string {
  return field.replace(/[.({].*$/, "");
}

/** Only the non-zero entries of a by-type count (Graph leaves zeros out). */
function nonZero(counts: Partial<Record<string, number>> | undefined): Record<string, number> {
  return Object.fromEntries(
    Object.entries(counts ?? {}).filter(([, n]) => typeof n === "number" && n > 0),
  ) as Record<string, number>;
}

const sumOf = (counts: Partial<Record<string, number>> | undefined) =>
  Object.values(nonZero(counts)).reduce((a, b) => a + b, 0);

/** Which image a photo's bytes are, by their magic numbers (the declared type is not trusted). */
function sniffImage(bytes: Uint8Array): string | null {
  if (bytes[0] === 0xff && bytes[1] === 0xd8) return "image/jpeg";
  if (bytes[0] === 0x89 && bytes[1] === 0x50 && bytes[2] === 0x4e && bytes[3] === 0x47) return "image/png";
  return null;
}

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startFacebookFake(options: FacebookFakeOptions = {}): Promise<FacebookFake> {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const now = options.now ?? Date.now;
  const codes = new Map<string, { redirectUri: string; scopes: string[] }>();
  const reelEnds: ReelEnd[] = [];
  const containerEnds: ContainerEnd[] = [];
  let failAfterCreate = 0;
  let nextId = 18_000_000_000_000_000n;
  const id = () => String(++nextId);

  const fake: FacebookFake = {
    ...newControls(failures),
    app: {
      clientId: "987654321",
      clientSecret: token("fbsecret_"),
      redirectUris: options.redirectUris ?? null,
    },
    pages: [],
    authorizations: [],
    tokens: new Map(),
    posts: [],
    photos: [],
    reels: [],
    containers: [],
    igPosts: [],
    comments: [],
    commentsClosed: new Set(),
    mediaProcessingPolls: options.mediaProcessingPolls ?? 2,
    reelProcessingPolls: options.reelProcessingPolls ?? 2,
    quotaTotal: options.quotaTotal ?? 100,
    notReadyAfterFinished: options.notReadyAfterFinished ?? 0,
    restrictedForSpam: new Set(),
    publishCalls: 0,
    unknownInsightMetrics: new Set(),
    multiReads: [],
    nextReelEnds: (end) => void reelEnds.push(end),
    resetNextReelUpload: () => {},
    nextContainerEnds: (end) => void containerEnds.push(end),
    finishProcessing: () => {
      for (const reel of fake.reels.filter((r) => r.phase === "processing")) settleReel(reel);
      for (const c of fake.containers.filter((c) => c.statusCode === "IN_PROGRESS")) settleContainer(c);
    },
    createThenFail: (n) => void (failAfterCreate += n),
    revokeTokens: (which = () => true) =>
      fake.tokens.forEach((t, value) => {
        if (which(t, value)) t.revoked = true;
      }),
    issuePageToken: (pageId, scopes = ALL_SCOPES) => issue("page", pageId, scopes, null),
  };

  function issue(kind: FakeToken["kind"], pageId: string | null, scopes: string[], ttlMs: number | null) {
    const value = token(kind === "page" ? "EAAPage" : kind === "long" ? "EAALong" : "EAAShort");
    const issuedAt = now();
    fake.tokens.set(value, {
      kind,
      pageId,
      scopes,
      issuedAt,
      expiresAt: ttlMs === null ? Number.POSITIVE_INFINITY : issuedAt + ttlMs,
      revoked: false,
    });
    return value;
  }

  const bad = (message: string, code = 100, subcode?: number) => graphError(400, { message, code, subcode });
  const ok = (body: unknown) => json(body, 200, { "x-fb-trace-id": `Afb${fake.requests.length}` });
  const denied = (scope: string) => bad(`(#200) The permission ${scope} is not granted for this action`, 200);

  /** The answer to a create that went through: hangs, fails with code 2 (still stored), or `body`. */
  function created(body: unknown): Response | Promise<Response> {
    if (fake.hangAfterReceive) return never();
    if (failAfterCreate > 0) {
      failAfterCreate--;
      return graphError(500, {
        message: "An unexpected error has occurred. Please retry your request later.",
        code: 2,
        isTransient: true,
      });
    }
    return ok(body);
  }

  function tokenOf(params: Record<string, string>, request: Request): FakeToken | null {
    const header = /^(?:Bearer|OAuth) (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const entry = fake.tokens.get(params.access_token ?? header ?? "");
    return entry && !entry.revoked && entry.expiresAt > now() ? entry : null;
  }

  /** Query and body parameters together, as Graph reads them; a multipart file comes back apart. */
  async function paramsOf(request: Request, url: URL) {
    const params: Record<string, string> = Object.fromEntries(url.searchParams);
    let file: File | null = null;
    const type = request.headers.get("content-type") ?? "";
    if (request.method === "POST" && (type.includes("form-urlencoded") || type.includes("multipart"))) {
      for (const [key, value] of (await request.formData()).entries()) {
        if (typeof value === "string") params[key] = value;
        else file = value;
      }
    }
    return { params, file };
  }

  /**
   * The `fields` asked for, or a (#100) error naming one the node does not have. A field may carry
   * Graph's modifiers (`comments.summary(true).limit(0)`): its name is what comes before them.
   */
  function fieldsOf(params: Record<string, string>, known: Set<string>): string[] | Response {
    const fields = params.fields ? splitFields(params.fields).map(fieldName) : ["id"];
    const unknown = fields.find((f) => !known.has(f));
    return unknown ? bad(`(#100) Tried accessing nonexisting field (${unknown})`) : fields;
  }

  /** Whether `fields` asks for `name` with `.summary(true)`. */
  function wantsSummary(params: Record<string, string>, name: string): boolean {
    return splitFields(params.fields ?? "").some((f) => fieldName(f) === name && /\.summary\(true\)/.test(f));
  }

  /** An edge read with `.limit(0)` (no items) and, when asked, its summary. */
  function edgeSummary(params: Record<string, string>, name: string, summary: Record<string, unknown>) {
    return { data: [], ...(wantsSummary(params, name) ? { summary } : {}) };
  }

  function pick(all: Record<string, unknown>, fields: string[]): Record<string, unknown> {
    return Object.fromEntries(Object.entries(all).filter(([key]) => key === "id" || fields.includes(key)));
  }

  async function download(url: string): Promise<NonNullable<FakeContainer["download"]>> {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(5000) });
      const bytes = (await response.arrayBuffer()).byteLength;
      const contentType = response.headers.get("content-type")?.split(";")[0]?.trim() ?? null;
      return { status: response.status, contentType, bytes };
    } catch {
      return { status: 0, contentType: null, bytes: 0 };
    }
  }

  // ---- Facebook Login -------------------------------------------------------------------------

  function dialog(url: URL): Response {
    const params = Object.fromEntries(url.searchParams);
    fake.authorizations.push(params);
    const redirectUri = params.redirect_uri ?? "";
    if (params.client_id !== fake.app.clientId) return new Response("Invalid App ID", { status: 400 });
    if (fake.app.redirectUris && !fake.app.redirectUris.includes(redirectUri))
      return new Response("URL blocked: the redirect URI is not whitelisted", { status: 400 });
    if (params.response_type !== "code") return new Response("response_type must be code", { status: 400 });
    // The person approves at once, granting what was asked (unknown scopes are dropped).
    const scopes = (params.scope ?? "").split(",").filter((s) => ALL_SCOPES.includes(s));
    const code = token("AQD");
    codes.set(code, { redirectUri, scopes });
    const target = new URL(redirectUri);
    target.searchParams.set("code", code);
    if (params.state) target.searchParams.set("state", params.state);
    return new Response(null, { status: 302, headers: { location: `${target}#_=_` } });
  }

  function accessToken(params: Record<string, string>): Response {
    if (params.client_id !== fake.app.clientId)
      return bad("Error validating application. Invalid application ID.", 101);
    if (params.client_secret !== fake.app.clientSecret) return bad("Error validating client secret.", 1);
    if (params.grant_type === "fb_exchange_token") {
      const short = fake.tokens.get(params.fb_exchange_token ?? "");
      if (!short || short.revoked || short.expiresAt <= now() || short.kind === "page")
        return graphError(400, EXPIRED_TOKEN);
      return ok({
        access_token: issue("long", null, short.scopes, LONG_TTL_S * 1000),
        token_type: "bearer",
        expires_in: LONG_TTL_S,
      });
    }
    const grant = codes.get(params.code ?? "");
    if (!grant) return bad("This authorization code has been used.", 100, 36009);
    if (grant.redirectUri !== params.redirect_uri)
      return bad(
        "Error validating verification code. Please make sure your redirect_uri is identical",
        100,
        36008,
      );
    codes.delete(params.code!);
    return ok({
      access_token: issue("short", null, grant.scopes, SHORT_TTL_MS),
      token_type: "bearer",
      expires_in: SHORT_TTL_MS / 1000,
    });
  }

  function accounts(params: Record<string, string>, user: FakeToken): Response {
    if (user.kind === "page") return bad("(#100) Tried accessing nonexisting field (accounts)");
    if (!user.scopes.includes("pages_show_list")) return denied("pages_show_list");
    const fields = fieldsOf(params, PAGE_FIELDS);
    if (fields instanceof Response) return fields;
    const size = Math.min(Number(params.limit ?? options.pageSize ?? 25) || 25, options.pageSize ?? 25);
    const start = params.after ? Number(Buffer.from(params.after, "base64url").toString()) : 0;
    const slice = fake.pages.slice(start, start + size);
    // A short-lived user token gives Page tokens that die with it; a long-lived one, tokens that do not.
    const ttl = user.kind === "long" ? null : user.expiresAt - now();
    const data = slice.map((page) =>
      pick(
        {
          id: page.id,
          name: page.name,
          access_token: issue("page", page.id, user.scopes, ttl),
          ...(page.username ? { username: page.username } : {}),
          picture: { data: { url: `${server.origin}/pictures/${page.id}.jpg`, is_silhouette: false } },
          ...(page.instagram && user.scopes.includes("instagram_basic")
            ? { instagram_business_account: { id: page.instagram.id } }
            : {}),
          tasks: ["ADVERTISE", "ANALYZE", "CREATE_CONTENT", "MODERATE", "MANAGE"],
          category: "Local business",
        },
        fields,
      ),
    );
    const end = start + slice.length;
    const cursor = (n: number) => Buffer.from(String(n)).toString("base64url");
    const more = end < fake.pages.length;
    return ok({
      data,
      paging: {
        cursors: { before: cursor(start), after: cursor(end) },
        ...(more ? { next: `${server.origin}/v25.0/me/accounts?after=${cursor(end)}&limit=${size}` } : {}),
      },
    });
  }

  // ---- Pages ------------------------------------------------------------------------------------

  function newPost(
    page: FakePage,
    post: Omit<FakeFacebookPost, "id" | "pageId" | "permalink" | "createdAt">,
  ) {
    const postNum = id();
    const stored: FakeFacebookPost = {
      id: `${page.id}_${postNum}`,
      pageId: page.id,
      permalink: `https://www.facebook.com/${page.username ?? page.id}/posts/${postNum}`,
      createdAt: now(),
      ...post,
    };
    fake.posts.push(stored);
    return stored;
  }

  function feed(page: FakePage, params: Record<string, string>): Response | Promise<Response> {
    const message = params.message ?? "";
    const link = params.link ?? null;
    const attached: string[] = [];
    for (const [key, value] of Object.entries(params)) {
      if (!/^attached_media\[\d+\]$/.test(key)) continue;
      let fbid: unknown;
      try {
        fbid = (JSON.parse(value) as { media_fbid?: unknown }).media_fbid;
      } catch {
        return bad("(#100) param attached_media must be an array of objects with media_fbid");
      }
      const photo = fake.photos.find((p) => p.id === String(fbid) && p.pageId === page.id);
      if (!photo || photo.published || photo.postId)
        return bad(`(#100) attached_media: ${String(fbid)} is not an unpublished photo of this Page`);
      attached.push(photo.id);
    }
    if (message === "" && link === null && attached.length === 0)
      return bad("(#100) The post is empty. Please enter a message to share.");
    if (link !== null && !/^https?:\/\//.test(link))
      return bad("(#100) link URL is not properly formatted", 100, 2061006);
    // Facebook refuses the same text (and link) on the same Page within a day.
    const since = now() - DAY_MS;
    if (
      attached.length === 0 &&
      fake.posts.some(
        (p) => p.pageId === page.id && p.message === message && p.link === link && p.createdAt > since,
      )
    )
      return bad(
        "You've already posted this. Posting the same content repeatedly on Facebook isn't allowed.",
        368,
      );
    const post = newPost(page, {
      kind: attached.length > 0 ? "photos" : link ? "link" : "status",
      message,
      link,
      photoIds: attached,
      videoId: null,
    });
    for (const photoId of attached) fake.photos.find((p) => p.id === photoId)!.postId = post.id;
    return created({ id: post.id });
  }

  async function photos(page: FakePage, params: Record<string, string>, file: File | null) {
    if (!file) return bad("(#324) Requires upload file", 324);
    const bytes = new Uint8Array(await file.arrayBuffer());
    const type = sniffImage(bytes);
    if (!type) return bad("(#324) Missing or invalid image file", 324);
    if (bytes.length > 4_000_000)
      return bad("Your photos couldn't be uploaded. Photos should be less than 4 MB.", 100, 1366046);
    const published = params.published !== "false";
    const photo: FakePhoto = {
      id: id(),
      pageId: page.id,
      published,
      contentType: type,
      bytes: bytes.length,
      postId: null,
    };
    fake.photos.push(photo);
    if (!published) return ok({ id: photo.id });
    const post = newPost(page, {
      kind: "photo",
      message: params.caption ?? "",
      link: null,
      photoIds: [photo.id],
      videoId: null,
    });
    photo.postId = post.id;
    return created({ id: photo.id, post_id: post.id });
  }

  function videoReels(page: FakePage, params: Record<string, string>): Response | Promise<Response> {
    if (params.upload_phase === "start") {
      const reel: FakeReel = {
        id: id(),
        pageId: page.id,
        received: 0,
        uploadHeaders: null,
        bytes: null,
        uploads: [],
        finished: false,
        videoState: null,
        description: null,
        phase: "created",
        pollsLeft: 0,
        end: { state: "published" },
        postId: null,
      };
      fake.reels.push(reel);
      return ok({ video_id: reel.id, upload_url: `${fake.origin}/video-upload/v25.0/${reel.id}` });
    }
    if (params.upload_phase !== "finish") return bad("(#100) upload_phase must be one of {start, finish}");
    const reel = fake.reels.find((r) => r.id === params.video_id && r.pageId === page.id);
    if (!reel) return bad("(#100) video_id is not a reel upload of this Page");
    if (reel.finished) return bad("(#100) This reel has already been finished");
    if (reel.phase !== "uploaded")
      return bad("Video upload is incomplete: no bytes were received", 6000, 1363030);
    if (!["PUBLISHED", "DRAFT", "SCHEDULED"].includes(params.video_state ?? ""))
      return bad("(#100) video_state must be one of {DRAFT, PUBLISHED, SCHEDULED}");
    reel.finished = true;
    reel.videoState = params.video_state!;
    reel.description = params.description ?? null;
    reel.end = reelEnds.shift() ?? { state: "published" };
    reel.phase = "processing";
    reel.pollsLeft = fake.reelProcessingPolls;
    if (reel.pollsLeft === 0) settleReel(reel);
    return created({ success: true });
  }

  function settleReel(reel: FakeReel): void {
    reel.pollsLeft = 0;
    if (reel.end.state !== "published") {
      reel.phase = reel.end.state;
      return;
    }
    reel.phase = "published";
    if (reel.videoState !== "PUBLISHED") return;
    const page = fake.pages.find((p) => p.id === reel.pageId)!;
    const post = newPost(page, {
      kind: "reel",
      message: reel.description ?? "",
      link: null,
      photoIds: [],
      videoId: reel.id,
    });
    post.permalink = `https://www.facebook.com/reel/${reel.id}`;
    reel.postId = post.id;
  }

  async function uploadReel(request: Request, videoId: string): Promise<Response> {
    const reel = fake.reels.find((r) => r.id === videoId);
    if (!reel) return json({ debug_info: { type: "NotFound", message: "Unknown video id" } }, 404);
    const auth = request.headers.get("authorization") ?? "";
    const owner = fake.tokens.get(/^OAuth (.+)$/.exec(auth)?.[1] ?? "");
    if (!owner || owner.revoked || owner.pageId !== reel.pageId) return graphError(400, EXPIRED_TOKEN);
    const body = new Uint8Array(await request.arrayBuffer());
    const bytes = body.length;
    const offset = request.headers.get("offset") ?? "";
    const fileSize = request.headers.get("file_size") ?? "";
    if (!/^\d+$/.test(offset) || !/^\d+$/.test(fileSize))
      return json(
        {
          debug_info: {
            type: "ParameterValidationError",
            message: "Header Offset/file_size not convertable",
          },
        },
        400,
      );
    // An upload starts at 0 or resumes where Meta's bytes end (or before: the bytes from `offset` replace).
    if (Number(offset) > reel.received || Number(offset) + bytes !== Number(fileSize))
      return json(
        { debug_info: { type: "ParameterValidationError", message: "file_size does not match" } },
        400,
      );
    reel.bytes ??= new Uint8Array(Number(fileSize));
    reel.bytes.set(body, Number(offset));
    reel.uploads.push({
      offset: Number(offset),
      length: bytes,
      cut: false,
      fresh: onFreshConnection(Object.fromEntries(request.headers)),
    });
    reel.received = Number(fileSize);
    reel.uploadHeaders = { authorization: auth, offset, fileSize };
    reel.phase = "uploaded";
    return ok({ success: true });
  }

  /** What arrived of a reel upload cut part-way: Meta keeps it, and reports it as `bytes_transferred`. */
  function keepReelPrefix(input: { target: string; headers: Record<string, string>; received: Uint8Array }) {
    const videoId = /^\/video-upload\/v\d+\.\d+\/(\d+)/.exec(input.target)?.[1];
    const reel = fake.reels.find((r) => r.id === videoId);
    const offset = Number(input.headers.offset ?? Number.NaN);
    const fileSize = Number(input.headers.file_size ?? Number.NaN);
    if (!reel || !(offset <= reel.received) || !Number.isInteger(fileSize)) return;
    reel.bytes ??= new Uint8Array(fileSize);
    reel.bytes.set(input.received.subarray(0, fileSize - offset), offset);
    reel.received = Math.max(reel.received, offset + input.received.length);
    reel.uploads.push({
      offset,
      length: input.received.length,
      cut: true,
      fresh: onFreshConnection(input.headers),
    });
  }

  function reelStatus(reel: FakeReel): Record<string, unknown> {
    if (reel.phase === "processing") {
      if (reel.pollsLeft > 0) reel.pollsLeft--;
      else settleReel(reel);
    }
    const done = { status: "complete" };
    const notStarted = { status: "not_started" };
    const uploading =
      reel.phase !== "created"
        ? { ...done, bytes_transferred: reel.received }
        : reel.received > 0
          ? { status: "in_progress", bytes_transferred: reel.received }
          : notStarted;
    switch (reel.phase) {
      case "created":
      case "uploaded":
        return {
          video_status: reel.phase === "created" ? "upload" : "upload_complete",
          uploading_phase: uploading,
          processing_phase: notStarted,
          publishing_phase: notStarted,
        };
      case "processing":
        return {
          video_status: "processing",
          uploading_phase: uploading,
          processing_phase: { status: "in_progress" },
          publishing_phase: notStarted,
        };
      case "published":
        return {
          video_status: "ready",
          uploading_phase: uploading,
          processing_phase: done,
          // A DRAFT reel is processed but never published.
          publishing_phase:
            reel.videoState === "PUBLISHED"
              ? { status: "complete", publish_status: "published", publish_time: Math.floor(now() / 1000) }
              : notStarted,
        };
      case "error":
        return {
          video_status: "error",
          uploading_phase: uploading,
          processing_phase: {
            status: "error",
            errors: [{ code: 1363008, message: (reel.end as { message: string }).message }],
          },
          publishing_phase: notStarted,
        };
      case "expired":
        return {
          video_status: "expired",
          uploading_phase: uploading,
          processing_phase: notStarted,
          publishing_phase: notStarted,
        };
    }
  }

  /**
   * GET /{page-id}/published_posts: the Page's posts, newest first, with the fields asked for (a Page
   * token of that Page with pages_read_engagement). `since` / `until` (unix times) bound created_time;
   * `limit` (default 25, at most 100) a page, `after` the cursor of the next one (`paging.next` while
   * more remain).
   */
  function publishedPosts(page: FakePage, params: Record<string, string>, caller: FakeToken): Response {
    if (!owns(caller, page.id)) return bad("(#190) This method must be called with a Page Access Token", 190);
    if (!caller.scopes.includes("pages_read_engagement")) return denied("pages_read_engagement");
    const fields = fieldsOf(params, POST_FIELDS);
    if (fields instanceof Response) return fields;
    const bound = (name: "since" | "until") => {
      const raw = params[name];
      return raw === undefined ? null : /^\d+$/.test(raw) ? Number(raw) * 1000 : Number.NaN;
    };
    const since = bound("since");
    const until = bound("until");
    if (Number.isNaN(since) || Number.isNaN(until)) return bad("(#100) since and until must be unix times");
    const limit = Math.min(100, Number(params.limit ?? 25) || 25);
    const all = fake.posts
      .filter((p) => p.pageId === page.id && (since === null || p.createdAt >= since))
      .filter((p) => until === null || p.createdAt <= until)
      .map((p, i) => ({ p, i }))
      .toSorted((a, b) => b.p.createdAt - a.p.createdAt || b.i - a.i)
      .map(({ p }) => p);
    const offset = params.after ? Number.parseInt(Buffer.from(params.after, "base64").toString(), 10) : 0;
    if (!Number.isInteger(offset) || offset < 0) return bad("(#100) Invalid cursor");
    const slice = all.slice(offset, offset + limit);
    const cursor = (n: number) => Buffer.from(String(n)).toString("base64");
    const more = offset + limit < all.length;
    const data = slice.map((p) => nodeObject(p.id, { fields: fields.join(",") }, caller));
    return ok({
      data,
      paging: {
        cursors: { before: cursor(offset), after: cursor(offset + slice.length) },
        ...(more
          ? {
              next:
                `${server.origin}/v25.0/${page.id}/published_posts?fields=${fields.join(",")}` +
                `&limit=${limit}&after=${cursor(offset + slice.length)}`,
            }
          : {}),
      },
    });
  }

  // ---- Instagram --------------------------------------------------------------------------------

  function settleContainer(c: FakeContainer): void {
    c.pollsLeft = 0;
    c.statusCode = c.end.code;
    c.status =
      c.end.code === "ERROR"
        ? c.end.status
        : c.end.code === "FINISHED"
          ? "Finished: Media has been uploaded and it is ready to be published."
          : null;
  }

  function refreshContainer(c: FakeContainer): void {
    if (c.statusCode !== "PUBLISHED" && c.statusCode !== "ERROR" && now() - c.createdAt > DAY_MS) {
      c.statusCode = "EXPIRED";
      c.status = null;
    }
  }

  async function createContainer(
    ig: FakeInstagramAccount,
    params: Record<string, string>,
  ): Promise<Response> {
    const isCarouselItem = params.is_carousel_item === "true";
    const mediaType = params.media_type ?? (params.image_url ? "IMAGE" : "");
    if (!["IMAGE", "VIDEO", "REELS", "CAROUSEL"].includes(mediaType))
      return bad("(#100) The parameter image_url is required", 100, 2207023);
    if (mediaType === "VIDEO" && !isCarouselItem)
      return bad(
        "(#100) The VIDEO media type is no longer supported for feed videos; use REELS",
        100,
        2207023,
      );
    if (isCarouselItem && (mediaType === "REELS" || mediaType === "CAROUSEL"))
      return bad("(#100) Only images and VIDEO can be carousel items", 100, 2207028);
    const caption = params.caption ?? null;
    if (caption !== null && [...caption].length > 2200) return bad("The caption is too long", 100, 2207010);
    const children = mediaType === "CAROUSEL" ? (params.children ?? "").split(",").filter(Boolean) : [];
    if (mediaType === "CAROUSEL") {
      if (children.length < 2 || children.length > 10)
        return bad("(#100) A carousel takes 2 to 10 items: too little or too many attachments", 100, 2207028);
      for (const child of children) {
        const item = fake.containers.find((c) => c.id === child && c.igId === ig.id);
        if (!item?.isCarouselItem)
          return bad(`(#100) children: ${child} is not a carousel item`, 100, 2207028);
        if (item.statusCode !== "FINISHED")
          return bad(`(#100) children: ${child} is not finished (${item.statusCode})`, 100, 2207028);
      }
    }
    const video = mediaType === "VIDEO" || mediaType === "REELS";
    const mediaUrl = mediaType === "CAROUSEL" ? null : video ? params.video_url : params.image_url;
    if (mediaType !== "CAROUSEL" && !mediaUrl)
      return bad(`(#100) The parameter ${video ? "video_url" : "image_url"} is required`);
    const container: FakeContainer = {
      id: id(),
      igId: ig.id,
      mediaType: mediaType as FakeContainer["mediaType"],
      caption,
      mediaUrl: mediaUrl ?? null,
      isCarouselItem,
      children,
      altText: params.alt_text ?? null,
      statusCode: "IN_PROGRESS",
      status: "In Progress: Media is still being processed.",
      pollsLeft: mediaUrl ? fake.mediaProcessingPolls : 0,
      end: containerEnds.shift() ?? { code: "FINISHED" },
      download: null,
      mediaId: null,
      createdAt: now(),
      notReadyAnswers: fake.notReadyAfterFinished,
    };
    if (mediaUrl) {
      // Meta cURLs the URL: the container fails when it does not answer 200 with a supported file.
      const d = await download(mediaUrl);
      container.download = d;
      if (d.status !== 200)
        container.end = {
          code: "ERROR",
          status: "Error: Media download has failed. The media URI doesn't meet our requirements. (2207052)",
        };
      else if (
        video
          ? !["video/mp4", "video/quicktime"].includes(d.contentType ?? "")
          : d.contentType !== "image/jpeg"
      )
        container.end = {
          code: "ERROR",
          status: video
            ? "Error: Unsupported video format (2207026)"
            : "Error: Unsupported image format; only JPEG is supported (2207005)",
        };
    }
    if (container.pollsLeft === 0) settleContainer(container);
    fake.containers.push(container);
    return ok({ id: container.id });
  }

  function igPostsOf(igId: string): FakeInstagramPost[] {
    return fake.igPosts.filter((p) => p.igId === igId);
  }

  function mediaPublish(
    ig: FakeInstagramAccount,
    params: Record<string, string>,
  ): Response | Promise<Response> {
    fake.publishCalls++;
    if (fake.restrictedForSpam.has(ig.id))
      return graphError(400, {
        message:
          "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
        code: 4,
        subcode: 2207051,
        isTransient: false,
      });
    const container = fake.containers.find((c) => c.id === params.creation_id && c.igId === ig.id);
    if (!container) return bad("(#100) creation_id is not a media container of this account", 100, 2207006);
    refreshContainer(container);
    if (container.isCarouselItem) return bad("(#100) A carousel item cannot be published on its own");
    const notReady = () =>
      bad("The media is not ready for publishing, please wait for a moment", 9007, 2207027);
    if (container.statusCode === "IN_PROGRESS") return notReady();
    // Meta may still be readying the media after the status read FINISHED, and asks to wait.
    if (container.statusCode === "FINISHED" && container.notReadyAnswers > 0) {
      container.notReadyAnswers--;
      return notReady();
    }
    if (container.statusCode === "PUBLISHED")
      return bad("(#100) The media has already been published", 100, 2207008);
    if (container.statusCode !== "FINISHED")
      return bad(`The media container cannot be published (${container.statusCode})`, 100, 2207008);
    const used = igPostsOf(ig.id).filter((p) => p.timestamp > now() - DAY_MS).length;
    if (used >= fake.quotaTotal)
      return graphError(400, {
        message: `Application request limit reached: maximum of ${fake.quotaTotal} API posts per 24 hours`,
        code: 9,
        subcode: 2207042,
      });
    const shortcode = token("").slice(0, 11);
    const post: FakeInstagramPost = {
      id: id(),
      igId: ig.id,
      containerId: container.id,
      mediaType:
        container.mediaType === "CAROUSEL"
          ? "CAROUSEL_ALBUM"
          : container.mediaType === "REELS"
            ? "VIDEO"
            : "IMAGE",
      caption: container.caption ?? "",
      children: container.children,
      shortcode,
      permalink: `https://www.instagram.com/${container.mediaType === "REELS" ? "reel" : "p"}/${shortcode}/`,
      timestamp: now(),
    };
    fake.igPosts.push(post);
    for (const c of [container, ...fake.containers.filter((c) => container.children.includes(c.id))]) {
      c.statusCode = "PUBLISHED";
      c.status = "Published: Media has been published.";
      c.mediaId = post.id;
    }
    return created({ id: post.id });
  }

  function igPostJson(post: FakeInstagramPost, fields: string[]) {
    return pick(
      {
        id: post.id,
        caption: post.caption,
        timestamp: graphTime(post.timestamp),
        permalink: post.permalink,
        media_type: post.mediaType,
        shortcode: post.shortcode,
        like_count: post.counts?.likes ?? 0,
        comments_count: post.counts?.comments ?? 0,
      },
      fields,
    );
  }

  // ---- Nodes and numbers -------------------------------------------------------------------------

  const owns = (caller: FakeToken, pageId: string) => caller.kind === "page" && caller.pageId === pageId;
  const pageOfIg = (igId: string) => fake.pages.find((p) => p.instagram?.id === igId)!.id;

  /** A node the caller may read, as its fields; an error answer; or null when there is no such node. */
  function nodeObject(
    nodeId: string,
    params: Record<string, string>,
    caller: FakeToken,
  ): Record<string, unknown> | Response | null {
    const post = fake.posts.find((p) => p.id === nodeId && owns(caller, p.pageId));
    if (post) {
      const fields = fieldsOf(params, POST_FIELDS);
      if (fields instanceof Response) return fields;
      const counts = post.counts ?? {};
      return pick(
        {
          id: post.id,
          message: post.message,
          permalink_url: post.permalink,
          created_time: graphTime(post.createdAt),
          // Graph leaves `shares` out of a post nobody shared.
          ...((counts.shares ?? 0) > 0 ? { shares: { count: counts.shares } } : {}),
          comments: edgeSummary(params, "comments", {
            order: "ranked",
            total_count: counts.comments ?? 0,
            can_comment: true,
          }),
          reactions: edgeSummary(params, "reactions", {
            total_count: sumOf(counts.reactions),
            viewer_reaction: "NONE",
          }),
        },
        fields,
      );
    }
    const reel = fake.reels.find((r) => r.id === nodeId && owns(caller, r.pageId));
    if (reel) {
      const fields = fieldsOf(params, VIDEO_FIELDS);
      if (fields instanceof Response) return fields;
      const status = fields.includes("status") ? reelStatus(reel) : null;
      // The reel's comments and reactions are those of the post it became.
      const counts = fake.posts.find((p) => p.videoId === reel.id)?.counts ?? {};
      return pick(
        {
          id: reel.id,
          status,
          permalink_url: `/reel/${reel.id}`,
          description: reel.description ?? "",
          comments: edgeSummary(params, "comments", {
            order: "ranked",
            total_count: counts.comments ?? 0,
            can_comment: true,
          }),
          reactions: edgeSummary(params, "reactions", {
            total_count: sumOf(counts.reactions),
            viewer_reaction: "NONE",
          }),
        },
        fields,
      );
    }
    const container = fake.containers.find((c) => c.id === nodeId && owns(caller, pageOfIg(c.igId)));
    if (container) {
      const fields = fieldsOf(params, CONTAINER_FIELDS);
      if (fields instanceof Response) return fields;
      refreshContainer(container);
      if (container.statusCode === "IN_PROGRESS") {
        if (container.pollsLeft > 0) container.pollsLeft--;
        else settleContainer(container);
      }
      return pick({ id: container.id, status_code: container.statusCode, status: container.status }, fields);
    }
    const igPost = fake.igPosts.find((p) => p.id === nodeId && owns(caller, pageOfIg(p.igId)));
    if (igPost) {
      const fields = fieldsOf(params, IG_MEDIA_FIELDS);
      return fields instanceof Response ? fields : igPostJson(igPost, fields);
    }
    return null;
  }

  /**
   * `GET /?ids=a,b&fields=…`: every node at once, keyed by id. All or nothing, as Graph does: one id
   * that does not exist (or is not the caller's) fails the whole read with (#803).
   */
  function multiRead(params: Record<string, string>, caller: FakeToken): Response {
    const ids = [...new Set((params.ids ?? "").split(",").map((id) => id.trim()))].filter(Boolean);
    fake.multiReads.push({ ids, fields: params.fields ?? "" });
    if (ids.length === 0) return bad("(#100) The parameter ids is required");
    if (ids.length > MAX_IDS) return bad(`(#100) Too many IDs. Maximum: ${MAX_IDS}.`);
    const out: Record<string, unknown> = {};
    const unknown: string[] = [];
    for (const id of ids) {
      const node = nodeObject(id, params, caller);
      if (node instanceof Response) return node;
      if (node === null) unknown.push(id);
      else out[id] = node;
    }
    if (unknown.length > 0)
      return bad(`(#803) Some of the aliases you requested do not exist: ${unknown.join(",")}`, 803);
    return ok(out);
  }

  /** One insight as Graph writes it (lifetime). */
  function insight(nodeId: string, name: string, value: unknown) {
    return {
      name,
      period: "lifetime",
      values: [{ value }],
      title: name,
      description: `Lifetime: ${name}`,
      id: `${nodeId}/insights/${name}/lifetime`,
    };
  }

  /** The `metric` list, or an error answer: none asked, or one Graph does not know. */
  function metricsOf(params: Record<string, string>, known: readonly string[]): string[] | Response {
    const metrics = (params.metric ?? "")
      .split(",")
      .map((m) => m.trim())
      .filter(Boolean);
    if (metrics.length === 0)
      return graphError(400, {
        message:
          "No metric was specified to be fetched. Please specify one or more metrics to be fetched and try again.",
        code: 3001,
        subcode: 1504028,
      });
    const invalid = metrics.find((m) => !known.includes(m) || fake.unknownInsightMetrics.has(m));
    return invalid ? bad(`(#100) The value must be a valid insights metric (${invalid})`) : metrics;
  }

  /** `GET /{node}/insights` for a Page post or an Instagram media; null when the node is neither. */
  function insightsOf(nodeId: string, params: Record<string, string>, caller: FakeToken): Response | null {
    const post = fake.posts.find((p) => p.id === nodeId && owns(caller, p.pageId));
    if (post) {
      if (!caller.scopes.includes("read_insights")) return denied("read_insights");
      const metrics = metricsOf(params, FAKE_POST_METRICS);
      if (metrics instanceof Response) return metrics;
      // Meta shows insights only for Pages with 100 likes or more: below that the answer is empty.
      const page = fake.pages.find((p) => p.id === post.pageId)!;
      if ((page.likes ?? 500) < 100) return ok({ data: [], paging: {} });
      const counts = post.counts ?? {};
      const values: Record<(typeof FAKE_POST_METRICS)[number], unknown> = {
        post_media_view: counts.mediaViews ?? 0,
        post_total_media_view_unique: counts.uniqueMediaViews ?? 0,
        post_reactions_by_type_total: nonZero(counts.reactions),
        post_clicks: sumOf(counts.clicks),
        post_clicks_by_type: nonZero(counts.clicks),
      };
      const data = metrics.map((m) => insight(post.id, m, values[m as keyof typeof values]));
      return ok({ data, paging: {} });
    }
    const media = fake.igPosts.find((p) => p.id === nodeId && owns(caller, pageOfIg(p.igId)));
    if (media) {
      if (!caller.scopes.includes("instagram_manage_insights"))
        return bad("(#10) Application does not have permission for this action", 10);
      const metrics = metricsOf(params, FAKE_IG_MEDIA_METRICS);
      if (metrics instanceof Response) return metrics;
      if (media.insights === "not_enough_viewers")
        return bad("(#10) Not enough viewers for the media to show insights", 10);
      if (media.insights === "empty") return ok({ data: [] });
      const counts = media.counts ?? {};
      const data = metrics.map((m) =>
        insight(media.id, m, counts[m as (typeof FAKE_IG_MEDIA_METRICS)[number]] ?? 0),
      );
      return ok({ data });
    }
    return null;
  }

  /**
   * `POST /{object-id}/comments` and `GET /{object-id}/comments` on a Page post (Page token with
   * pages_manage_engagement to comment; the comment is the Page's) or an Instagram media (the linked
   * Page's token with instagram_manage_comments; the comment is the account's). A comment needs a
   * `message`; comments turned off answer (#100) with subcode 1446036 as Graph does. Null when the
   * object is neither.
   */
  function commentsEdge(method: string, objectId: string, params: Record<string, string>, caller: FakeToken) {
    const post = fake.posts.find((p) => p.id === objectId);
    const media = fake.igPosts.find((p) => p.id === objectId);
    if (!post && !media) return null;
    const pageId = post ? post.pageId : pageOfIg(media!.igId);
    if (!owns(caller, pageId)) return bad("(#200) A Page access token of the object's Page is required", 200);
    if (method === "GET") {
      const listed = fake.comments.filter((c) => c.objectId === objectId).toReversed();
      return ok({
        data: listed.map((c) =>
          post
            ? {
                id: c.id,
                message: c.message,
                from: { id: c.fromId, name: c.fromName },
                created_time: graphTime(c.createdAt),
              }
            : { id: c.id, text: c.message, username: c.fromName, timestamp: graphTime(c.createdAt) },
        ),
      });
    }
    if (post && !caller.scopes.includes("pages_manage_engagement")) return denied("pages_manage_engagement");
    if (media && !caller.scopes.includes("instagram_manage_comments"))
      return bad("(#10) Application does not have permission for this action", 10);
    const message = params.message ?? "";
    if (message.trim() === "") return bad("(#100) The parameter message is required");
    if (fake.commentsClosed.has(objectId))
      return bad("(#100) Comments on this object are turned off", 100, 1446036);
    const page = fake.pages.find((p) => p.id === pageId)!;
    const comment: FakeComment = {
      id: post ? `${objectId.split("_")[1] ?? objectId}_${id()}` : id(),
      objectId,
      fromId: post ? page.id : page.instagram!.id,
      fromName: post ? page.name : page.instagram!.username,
      message,
      createdAt: now(),
    };
    fake.comments.push(comment);
    return created({ id: comment.id });
  }

  // ---- Routing ----------------------------------------------------------------------------------

  async function route(request: Request, url: URL): Promise<Response> {
    const method = request.method;
    const upload = /^\/video-upload\/v\d+\.\d+\/(\d+)$/.exec(url.pathname);
    if (upload && method === "POST") return uploadReel(request, upload[1]!);
    const versioned = VERSION.exec(url.pathname)?.[1];
    if (!versioned) return bad(`Unknown path components: ${url.pathname}`, 2500);
    if (method === "GET" && versioned === "/dialog/oauth") return dialog(url);
    const { params, file } = await paramsOf(request, url);
    if (method === "GET" && versioned === "/oauth/access_token") return accessToken(params);
    const caller = tokenOf(params, request);
    if (!caller) return graphError(400, EXPIRED_TOKEN);
    if (versioned === "/" && method === "GET" && params.ids !== undefined) return multiRead(params, caller);
    const [, nodeId = "", edge] = /^\/([^/]+)(?:\/([a-z_]+))?$/.exec(versioned) ?? [];
    if (nodeId === "me" && edge === "accounts" && method === "GET") return accounts(params, caller);

    const page = fake.pages.find((p) => p.id === nodeId);
    if (page && edge === "published_posts" && method === "GET") return publishedPosts(page, params, caller);
    if (page && edge) {
      if (caller.kind !== "page" || caller.pageId !== page.id)
        return bad("(#200) A Page access token is required to publish on this Page", 200);
      if (!caller.scopes.includes("pages_manage_posts")) return denied("pages_manage_posts");
      if (edge === "feed" && method === "POST") return feed(page, params);
      if (edge === "photos" && method === "POST") return photos(page, params, file);
      if (edge === "video_reels" && method === "POST") return videoReels(page, params);
    }
    const igPage = fake.pages.find((p) => p.instagram?.id === nodeId);
    if (igPage?.instagram) {
      const ig = igPage.instagram;
      if (caller.kind !== "page" || caller.pageId !== igPage.id)
        return bad("(#10) The Page linked to this Instagram account must make this call", 10);
      if (!edge && method === "GET") {
        const fields = fieldsOf(params, IG_USER_FIELDS);
        return fields instanceof Response ? fields : ok(pick({ ...ig, followers_count: 0 }, fields));
      }
      if (edge === "content_publishing_limit" && method === "GET") {
        const used = igPostsOf(ig.id).filter((p) => p.timestamp > now() - DAY_MS).length;
        return ok({
          data: [{ quota_usage: used, config: { quota_total: fake.quotaTotal, quota_duration: 86400 } }],
        });
      }
      if (edge === "media" && method === "GET") {
        const fields = fieldsOf(params, IG_MEDIA_FIELDS);
        if (fields instanceof Response) return fields;
        const newest = igPostsOf(ig.id).toSorted((a, b) => b.timestamp - a.timestamp);
        const { page: listed, paging } = graphPage(newest, params, url);
        return ok({ data: listed.map((p) => igPostJson(p, fields)), paging });
      }
      if (!caller.scopes.includes("instagram_content_publish")) return denied("instagram_content_publish");
      if (edge === "media" && method === "POST") return createContainer(ig, params);
      if (edge === "media_publish" && method === "POST") return mediaPublish(ig, params);
    }
    if (edge === "comments" && (method === "POST" || method === "GET")) {
      const answer = commentsEdge(method, nodeId, params, caller);
      if (answer) return answer;
    }
    if (!edge && method === "GET") {
      const node = nodeObject(nodeId, params, caller);
      if (node instanceof Response) return node;
      if (node) return ok(node);
    }
    if (edge === "insights" && method === "GET") {
      const answer = insightsOf(nodeId, params, caller);
      if (answer) return answer;
    }
    return bad(
      `Unsupported ${method} request. Object with ID '${nodeId}' does not exist, cannot be loaded due to ` +
        `missing permissions, or does not support this operation`,
      100,
      33,
    );
  }

  const server = serveFake({ controls: fake, failures, route, defaultFailure: metaDefaultFailure });
  const { cuts, origin, stop } = await behindCutProxy(server, options.cuttable);
  fake.origin = origin;
  fake.stop = stop;
  fake.resetNextReelUpload = ({ keepBytes }) => {
    cutProxyFor(cuts, "resetNextReelUpload").cutNext({
      keepBytes,
      match: ({ method, target }) => method === "POST" && target.startsWith("/video-upload/"),
      onCut: keepReelPrefix,
    });
  };
  fake.pages = options.pages ?? defaultPages(server.origin);
  return fake;
}
