// A faithful local fake of LinkedIn (providers.md §7, §14): the OAuth code flow on /oauth/v2/*,
// /v2/userinfo, organization ACLs and lookups, /rest/posts (201 + x-restli-id, empty body), the
// Images and Videos APIs with upload URLs, ETags, finalize and a processing state machine, Rest.li
// error bodies (401 serviceErrorCode, 422 DUPLICATE_POST, 429 without a reset header), and a page's
// post statistics (organizationalEntityShareStatistics with `shares=List(…)` or `ugcPosts=List(…)`).
// Every /rest/ call needs LinkedIn-Version and X-Restli-Protocol-Version: 2.0.0, or it answers 400; a
// version outside the active window (retired a year after release, or not yet released) answers 426
// NONEXISTENT_VERSION, as LinkedIn does.
import {
  json,
  never,
  newControls,
  onFreshConnection,
  readBody,
  serveFake,
  behindCutProxy,
  cutProxyFor,
  token,
  type FailSpec,
  type FakeControls,
} from "./shared.ts";

/** A post the fake stored, as LinkedIn received it. */
export interface FakePost {
  urn: string;
  author: string;
  /** The commentary exactly as sent (escaped "little text"). */
  commentary: string;
  visibility: string;
  content: Record<string, any> | null;
  lifecycleState: string;
  isReshareDisabledByAuthor: boolean;
  distribution: Record<string, any> | null;
  version: string;
  /** Its lifetime statistics (tests set these; the share statistics report them, missing ones as 0). */
  counts?: LinkedInCounts;
  /**
   * When it was created and last changed, epoch ms, for posts a test puts in by hand; a post created
   * through the API is dated by the fake's clock at creation. The author finder reports them.
   */
  createdAt?: number;
  lastModifiedAt?: number;
}

/** A post's `totalShareStatistics`, by LinkedIn's field names. */
export interface LinkedInCounts {
  impressionCount?: number;
  uniqueImpressionsCount?: number;
  clickCount?: number;
  likeCount?: number;
  commentCount?: number;
  shareCount?: number;
}

/** An image or video upload; `pollsLeft` status reads answer PROCESSING before it is AVAILABLE. */
export interface FakeMedia {
  urn: string;
  kind: "image" | "video";
  owner: string;
  size: number;
  /** Bytes received so far (all parts for a video). */
  received: number;
  status: "WAITING_UPLOAD" | "PROCESSING" | "AVAILABLE" | "PROCESSING_FAILED";
  pollsLeft: number;
  /** Video parts: byte ranges, and the ETag each PUT answered with. */
  parts: { firstByte: number; lastByte: number; etag: string | null }[];
  uploadToken: string;
  finalizedWith: string[] | null;
}

/** A page in the fake, and the member's role on it. */
export interface FakeOrganization {
  id: string;
  localizedName: string;
  vanityName: string;
  role: "ADMINISTRATOR" | "ANALYST" | "CONTENT_ADMINISTRATOR";
  state: "APPROVED" | "REQUESTED" | "REVOKED";
}

/** Settings of the fake. */
export interface LinkedInFakeOptions {
  clientId?: string;
  clientSecret?: string;
  /** Whether the app has the Community Management (pages) product; without it page scopes are refused. */
  pagesProduct?: boolean;
  /** Whether the app is approved for programmatic refresh tokens. */
  refreshTokens?: boolean;
  organizations?: FakeOrganization[];
  /** Status reads of a new image that answer PROCESSING. */
  imageProcessingPolls?: number;
  /** Status reads of a finalized video that answer PROCESSING. */
  videoProcessingPolls?: number;
  /** Bytes per video part in upload instructions (LinkedIn: 4 MiB). */
  videoPartBytes?: number;
  /** The oldest and newest versions LinkedIn serves (YYYYMM); others answer 426. Default 202511–202611. */
  activeVersions?: { oldest: string; newest: string };
  /** The clock posts are dated by (createdAt, lastModifiedAt). Default Date.now. */
  now?: () => number;

  /** Serve through the cut proxy (test/fakes/shared.ts), so a part's connection can be reset mid-body. */
  cuttable?: boolean;
}

/** One video part PUT as it reached LinkedIn: stored (with an ETag) or reset part-way (nothing kept). */
export interface FakePartPut {
  mediaId: string;
  index: number;
  /** Body bytes that arrived. */
  length: number;
  cut: boolean;
  /** Whether it was the first request on its connection (known behind the cut proxy). */
  fresh: boolean;
}

/** A comment made through the Comments API (`/rest/socialActions/{urn}/comments`). */
export interface FakeLinkedInComment {
  urn: string;
  object: string;
  actor: string;
  text: string;
  createdAt: number;
}

/** The running fake: its origin, what it stored, and its switches. */
export interface LinkedInFake extends FakeControls {
  origin: string;
  stop(): Promise<void>;
  clientId: string;
  clientSecret: string;
  member: { sub: string; name: string; picture: string };
  organizations: FakeOrganization[];
  posts: FakePost[];
  /** Comments on posts, oldest first. */
  comments: FakeLinkedInComment[];
  /** Posts whose comments are closed: a comment on one answers 403. */
  commentsClosed: Set<string>;
  media: FakeMedia[];
  /** Statistics requests answered: the page, the list parameter (null: none) and the post URNs in it. */
  statisticsQueries: { organization: string; param: string | null; urns: string[] }[];
  /** Token requests (code exchanges and refreshes), form fields as received. */
  tokenRequests: Record<string, string>[];
  imageProcessingPolls: number;
  videoProcessingPolls: number;
  /** Finalized videos fail processing (PROCESSING_FAILED after their PROCESSING polls). */
  failVideoProcessing: boolean;
  /** Image status reads answer 403 (a token that may post images but not read them). */
  imageReadsForbidden: boolean;
  /** The versions served (YYYYMM, inclusive); tests move it to retire the one Herald sends. */
  activeVersions: { oldest: string; newest: string };
  /** Every video part PUT, in order (also those cut). */
  partPuts: FakePartPut[];
  /** The bytes of each video's parts as stored, by media URN (the file once every part is in). */
  videoBytes: Map<string, Uint8Array>;
  /**
   * The connection of the next video part PUT is reset once `keepBytes` of it arrived (needs
   * `cuttable`): the part gets no ETag and LinkedIn keeps none of it.
   */
  resetNextPart(input: { keepBytes: number }): void;
  /** Every access token issued so far answers 401 65602 (expired) from now on. */
  expireTokens(): void;
  /** Every access token answers 401 65601 REVOKED_ACCESS_TOKEN from now on; refresh tokens die too. */
  revokeTokens(): void;
  /** An access token with the given scopes (default: all) without the OAuth dance. */
  issueToken(scopes?: string[]): string;
}

const ALL_SCOPES = [
  "openid",
  "profile",
  "email",
  "w_member_social",
  "w_organization_social",
  "r_organization_social",
  "rw_organization_admin",
];
const PAGE_SCOPES = ["w_organization_social", "r_organization_social", "rw_organization_admin"];
const ACCESS_TTL_S = 60 * 24 * 60 * 60;
const REFRESH_TTL_S = 365 * 24 * 60 * 60;
const MAX_COMMENTARY = 3000;

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startLinkedInFake(options: LinkedInFakeOptions = {}): Promise<LinkedInFake> {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const tokens = new Map<string, { scopes: string[]; state: "live" | "expired" | "revoked" }>();
  const refreshTokens = new Map<string, { scopes: string[]; expiresAt: number; revoked: boolean }>();
  const codes = new Map<string, { redirectUri: string; scopes: string[] }>();
  let nextId = 7_141_138_937_766_391_000n;
  const id = () => String(++nextId);

  const fake: LinkedInFake = {
    ...newControls(failures),
    clientId: options.clientId ?? "li-client",
    clientSecret: options.clientSecret ?? "li-secret",
    member: { sub: "782bbtaQ", name: "Alice Example", picture: "https://media.licdn.com/dms/image/alice" },
    organizations: options.organizations ?? [
      {
        id: "2414183",
        localizedName: "Devtestco",
        vanityName: "devtestco",
        role: "ADMINISTRATOR",
        state: "APPROVED",
      },
      {
        id: "5590506",
        localizedName: "Herald Labs",
        vanityName: "herald-labs",
        role: "ADMINISTRATOR",
        state: "APPROVED",
      },
      { id: "1337", localizedName: "Watched Co", vanityName: "watched", role: "ANALYST", state: "APPROVED" },
      {
        id: "4242",
        localizedName: "Pending Co",
        vanityName: "pending",
        role: "ADMINISTRATOR",
        state: "REQUESTED",
      },
    ],
    posts: [],
    comments: [],
    commentsClosed: new Set(),
    media: [],
    tokenRequests: [],
    statisticsQueries: [],
    imageProcessingPolls: options.imageProcessingPolls ?? 0,
    videoProcessingPolls: options.videoProcessingPolls ?? 2,
    failVideoProcessing: false,
    imageReadsForbidden: false,
    activeVersions: options.activeVersions ?? { oldest: "202511", newest: "202611" },
    partPuts: [],
    videoBytes: new Map(),
    resetNextPart: () => {},
    expireTokens: () => tokens.forEach((t) => (t.state = "expired")),
    revokeTokens: () => {
      tokens.forEach((t) => (t.state = "revoked"));
      refreshTokens.forEach((r) => (r.revoked = true));
    },
    issueToken: (scopes = ALL_SCOPES) => {
      const value = token("AQV");
      tokens.set(value, { scopes, state: "live" });
      return value;
    },
  };
  /** When each post created through the API was created (the fake's clock). */
  const postTimes = new Map<string, number>();
  const memberUrn = () => `urn:li:person:${fake.member.sub}`;
  const allowedScopes =
    options.pagesProduct === false ? ALL_SCOPES.filter((s) => !PAGE_SCOPES.includes(s)) : ALL_SCOPES;

  // Rest.li error bodies.
  const restError = (status: number, message: string, extra: Record<string, unknown> = {}) =>
    json({ status, message, ...extra }, status);
  const unauthorized = (state: "missing" | "expired" | "revoked") =>
    state === "revoked"
      ? restError(401, "The token used in the request has been revoked by the user", {
          serviceErrorCode: 65601,
          code: "REVOKED_ACCESS_TOKEN",
        })
      : state === "expired"
        ? restError(401, "The token used in the request is expired", {
            serviceErrorCode: 65602,
            code: "EXPIRED_ACCESS_TOKEN",
          })
        : restError(401, "Invalid access token", { serviceErrorCode: 65600, code: "INVALID_ACCESS_TOKEN" });
  const forbidden = (what: string) =>
    restError(403, `Not enough permissions to access: ${what}`, {
      serviceErrorCode: 100,
      code: "ACCESS_DENIED",
    });
  const oauthError = (status: number, error: string, description: string) =>
    json({ error, error_description: description }, status);

  /** The caller's token entry, or the 401 to answer. */
  const caller = (request: Request): { scopes: string[] } | Response => {
    const value = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    const entry = value ? tokens.get(value) : undefined;
    if (!entry) return unauthorized("missing");
    if (entry.state !== "live") return unauthorized(entry.state);
    return entry;
  };
  const administered = (urn: string) =>
    fake.organizations.some(
      (o) => `urn:li:organization:${o.id}` === urn && o.role === "ADMINISTRATOR" && o.state === "APPROVED",
    );
  /** Whether a token may act as `owner` (the member, or a page it administers). */
  const mayActAs = (scopes: string[], owner: string) =>
    owner === memberUrn()
      ? scopes.includes("w_member_social")
      : scopes.includes("w_organization_social") && administered(owner);

  async function route(request: Request, url: URL): Promise<Response> {
    const { pathname } = url;
    const method = request.method;
    if (method === "GET" && pathname === "/oauth/v2/authorization") return authorize(url);
    if (method === "POST" && pathname === "/oauth/v2/accessToken") return accessToken(request);
    if (method === "PUT" && pathname.startsWith("/dms-uploads/")) return upload(request, pathname);
    const auth = caller(request);
    if (auth instanceof Response) return auth;
    if (method === "GET" && pathname === "/v2/userinfo") {
      if (!auth.scopes.includes("openid")) return forbidden("userinfo");
      return json({
        sub: fake.member.sub,
        name: fake.member.name,
        given_name: "Alice",
        family_name: "Example",
        picture: fake.member.picture,
        locale: { country: "US", language: "en" },
      });
    }
    if (!pathname.startsWith("/rest/")) return restError(404, `No resource found for ${pathname}`);
    const version = request.headers.get("linkedin-version");
    if (!version || !/^\d{6}(\.\d{2})?$/.test(version))
      return restError(
        400,
        "A version must be present. Please specify a version by adding the LinkedIn-Version header.",
        {
          code: "VERSION_MISSING",
        },
      );
    // LinkedIn compares the month (a revision YYYYMM.RR belongs to its month) and names the version as a
    // date (YYYYMMDD) in its message.
    const month = version.slice(0, 6);
    if (month < fake.activeVersions.oldest || month > fake.activeVersions.newest)
      return restError(426, `Requested version ${month}01 is not active`, { code: "NONEXISTENT_VERSION" });
    if (request.headers.get("x-restli-protocol-version") !== "2.0.0")
      return restError(400, "Rest.li protocol version 2.0.0 is required (X-Restli-Protocol-Version)", {
        code: "ILLEGAL_ARGUMENT",
      });
    return rest(request, url, auth.scopes, version);
  }

  function authorize(url: URL): Response {
    const q = url.searchParams;
    if (q.get("client_id") !== fake.clientId)
      return new Response("The client_id is invalid", { status: 400 });
    const redirect = q.get("redirect_uri");
    if (!redirect) return new Response("The redirect_uri is missing", { status: 400 });
    const target = new URL(redirect);
    if (q.get("state")) target.searchParams.set("state", q.get("state")!);
    const scopes = (q.get("scope") ?? "").split(/\s+/).filter(Boolean);
    const refused = scopes.find((s) => !allowedScopes.includes(s));
    if (q.get("response_type") !== "code" || scopes.length === 0 || refused) {
      target.searchParams.set("error", refused ? "unauthorized_scope_error" : "invalid_request");
      target.searchParams.set(
        "error_description",
        refused
          ? `Scope "${refused}" is not authorized for your application`
          : "missing response_type or scope",
      );
    } else {
      const code = token("code_");
      codes.set(code, { redirectUri: redirect, scopes });
      target.searchParams.set("code", code);
    }
    return new Response(null, { status: 302, headers: { location: String(target) } });
  }

  async function accessToken(request: Request): Promise<Response> {
    const form = (await readBody(request)) as Record<string, string>;
    fake.tokenRequests.push(form);
    if (form.client_id !== fake.clientId || form.client_secret !== fake.clientSecret)
      return oauthError(401, "invalid_client", "Client authentication failed");
    const issue = (scopes: string[], refresh: { value: string; expiresAt: number } | null) => {
      const access = fake.issueToken(scopes);
      return json({
        access_token: access,
        expires_in: ACCESS_TTL_S,
        scope: scopes.join(","), // LinkedIn lists granted scopes comma-separated
        token_type: "Bearer",
        ...(refresh
          ? {
              refresh_token: refresh.value,
              refresh_token_expires_in: Math.max(0, Math.floor((refresh.expiresAt - Date.now()) / 1000)),
            }
          : {}),
      });
    };
    if (form.grant_type === "authorization_code") {
      const grant = codes.get(form.code ?? "");
      if (!grant || grant.redirectUri !== form.redirect_uri)
        return oauthError(
          400,
          "invalid_request",
          "Unable to retrieve access token: appid/redirect uri/code verifier does not match " +
            "authorization code. Or authorization code expired.",
        );
      codes.delete(form.code!);
      if (options.refreshTokens !== true) return issue(grant.scopes, null);
      const refresh = { value: token("AQX"), expiresAt: Date.now() + REFRESH_TTL_S * 1000 };
      refreshTokens.set(refresh.value, {
        scopes: grant.scopes,
        expiresAt: refresh.expiresAt,
        revoked: false,
      });
      return issue(grant.scopes, refresh);
    }
    if (form.grant_type === "refresh_token") {
      const entry = refreshTokens.get(form.refresh_token ?? "");
      if (!entry || entry.revoked || entry.expiresAt <= Date.now())
        return oauthError(400, "invalid_request", "The provided refresh token is invalid or expired");
      // LinkedIn keeps the refresh token (no rotation) and does not extend its life.
      return issue(entry.scopes, { value: form.refresh_token!, expiresAt: entry.expiresAt });
    }
    return oauthError(400, "unsupported_grant_type", `grant_type ${form.grant_type} is not supported`);
  }

  async function rest(request: Request, url: URL, scopes: string[], version: string): Promise<Response> {
    const { pathname } = url;
    const method = request.method;
    const action = url.searchParams.get("action");
    if (method === "GET" && pathname === "/rest/organizationAcls") {
      if (!scopes.includes("rw_organization_admin")) return forbidden("organizationAcls.FINDER-roleAssignee");
      const q = url.searchParams;
      if (q.get("q") !== "roleAssignee") return restError(400, "q=roleAssignee is required");
      const matching = fake.organizations.filter(
        (o) =>
          (!q.get("role") || o.role === q.get("role")) && (!q.get("state") || o.state === q.get("state")),
      );
      const start = Number(q.get("start") ?? 0);
      const count = Number(q.get("count") ?? 10);
      return json({
        paging: { start, count, total: matching.length, links: [] },
        elements: matching.slice(start, start + count).map((o) => ({
          roleAssignee: memberUrn(),
          state: o.state,
          role: o.role,
          organization: `urn:li:organization:${o.id}`,
        })),
      });
    }
    const orgMatch = /^\/rest\/organizations\/(\d+)$/.exec(pathname);
    if (method === "GET" && orgMatch) {
      const org = fake.organizations.find((o) => o.id === orgMatch[1]);
      if (!org) return restError(404, `Organization ${orgMatch[1]} not found`);
      return json({
        id: Number(org.id),
        localizedName: org.localizedName,
        vanityName: org.vanityName,
        name: { localized: { en_US: org.localizedName }, preferredLocale: { country: "US", language: "en" } },
      });
    }
    if (method === "POST" && pathname === "/rest/images" && action === "initializeUpload")
      return initializeUpload(request, scopes, "image");
    if (method === "POST" && pathname === "/rest/videos" && action === "initializeUpload")
      return initializeUpload(request, scopes, "video");
    if (method === "POST" && pathname === "/rest/videos" && action === "finalizeUpload")
      return finalize(request);
    const mediaMatch = /^\/rest\/(images|videos)\/([^/]+)$/.exec(pathname);
    if (method === "GET" && mediaMatch) {
      const urn = decodeURIComponent(mediaMatch[2]!);
      const media = fake.media.find((m) => m.urn === urn);
      if (!media) return restError(404, `${urn} not found`);
      if (media.kind === "image" && fake.imageReadsForbidden) return forbidden("images.GET");
      if (media.status === "PROCESSING") {
        if (media.pollsLeft > 0) media.pollsLeft--;
        else
          media.status =
            media.kind === "video" && fake.failVideoProcessing ? "PROCESSING_FAILED" : "AVAILABLE";
      }
      return json({
        id: media.urn,
        owner: media.owner,
        status: media.status,
        ...(media.status === "PROCESSING_FAILED" ? { processingFailureReason: "UNSUPPORTED_CODEC" } : {}),
        ...(media.status === "AVAILABLE" ? { downloadUrl: `${fake.origin}/dms/${media.urn}` } : {}),
      });
    }
    const commentsOf = /^\/rest\/socialActions\/([^/]+)\/comments$/.exec(pathname);
    if (commentsOf && method === "POST")
      return createComment(request, decodeURIComponent(commentsOf[1]!), scopes);
    if (commentsOf && method === "GET") return listComments(url, decodeURIComponent(commentsOf[1]!));
    if (method === "POST" && pathname === "/rest/posts") return createPost(request, scopes, version);
    if (method === "GET" && pathname === "/rest/posts" && url.searchParams.get("q") === "author")
      return postsByAuthor(url, scopes);
    if (method === "GET" && pathname === "/rest/organizationalEntityShareStatistics")
      return shareStatistics(url, scopes);
    return restError(404, `No resource found for ${method} ${pathname}`);
  }

  /**
   * A page's lifetime post statistics. `organizationalEntity` must be a page the member administers
   * (scope rw_organization_admin); `shares=List(…)` or `ugcPosts=List(…)` (one of them, URNs
   * URL-encoded inside the list) names the posts: one element per post of that page the fake holds,
   * others are left out. Without a list: one element with the page's totals.
   */
  function shareStatistics(url: URL, scopes: string[]): Response {
    const q = url.searchParams;
    if (q.get("q") !== "organizationalEntity") return restError(400, "q=organizationalEntity is required");
    const organization = q.get("organizationalEntity") ?? "";
    if (!/^urn:li:organization:\d+$/.test(organization))
      return restError(400, `organizationalEntity ${organization} is not an organization URN`);
    if (!scopes.includes("rw_organization_admin") || !administered(organization))
      return forbidden("organizationalEntityShareStatistics.FINDER-organizationalEntity");
    const lists = (["shares", "ugcPosts"] as const).filter((p) => q.has(p));
    if (lists.length > 1) return restError(400, "shares and ugcPosts cannot be asked for together");
    const param = lists[0];
    const totals = (posts: FakePost[]) => {
      const sum = (field: keyof LinkedInCounts) => posts.reduce((n, p) => n + (p.counts?.[field] ?? 0), 0);
      const impressions = sum("impressionCount");
      const engaged = sum("clickCount") + sum("likeCount") + sum("commentCount") + sum("shareCount");
      return {
        uniqueImpressionsCount: sum("uniqueImpressionsCount"),
        shareCount: sum("shareCount"),
        engagement: impressions > 0 ? engaged / impressions : 0,
        clickCount: sum("clickCount"),
        likeCount: sum("likeCount"),
        impressionCount: impressions,
        commentCount: sum("commentCount"),
      };
    };
    const ofPage = fake.posts.filter((p) => p.author === organization);
    if (!param) {
      fake.statisticsQueries.push({ organization, param: null, urns: [] });
      return json({
        paging: { start: 0, count: 10, links: [] },
        elements: [{ organizationalEntity: organization, totalShareStatistics: totals(ofPage) }],
      });
    }
    // Rest.li 2.0: the URNs inside List(…) are URL-encoded (a raw ':' is refused).
    const raw = new RegExp(`[?&]${param}=([^&]*)`).exec(url.search)?.[1] ?? "";
    if (raw.includes(":")) return restError(400, `${param}: URNs inside List() must be URL-encoded`);
    const list = /^List\((.*)\)$/.exec(q.get(param) ?? "");
    if (!list) return restError(400, `${param} must be a Rest.li list: List(urn,urn)`);
    const urns = list[1]!.split(",").filter(Boolean).map(decodeURIComponent);
    const prefix = param === "shares" ? "urn:li:share:" : "urn:li:ugcPost:";
    const wrong = urns.find((u) => !u.startsWith(prefix));
    if (wrong) return restError(400, `${param} takes ${prefix} URNs, not ${wrong}`);
    fake.statisticsQueries.push({ organization, param, urns });
    const field = param === "shares" ? "share" : "ugcPost";
    const elements = urns.flatMap((urn) => {
      const post = ofPage.find((p) => p.urn === urn);
      return post
        ? [{ organizationalEntity: organization, [field]: urn, totalShareStatistics: totals([post]) }]
        : [];
    });
    return json({ paging: { start: 0, count: 10, links: [] }, elements });
  }

  /**
   * The Posts API's author finder (`q=author&author=<urn>`): a page's posts need r_organization_social
   * and a page the member administers, a member's the restricted r_member_social (else 403). Newest
   * first by `sortBy` (LAST_MODIFIED, the default, or CREATED), `start`/`count` (default 10, at most
   * 100) with a `next` link while more remain; each post as the API reads it (commentary as stored).
   */
  function postsByAuthor(url: URL, scopes: string[]): Response {
    const createdAt = (p: FakePost) => p.createdAt ?? postTimes.get(p.urn) ?? 0;
    const lastModifiedAt = (p: FakePost) => p.lastModifiedAt ?? createdAt(p);
    const q = url.searchParams;
    const author = q.get("author") ?? "";
    if (!/^urn:li:(person|organization):[^:]+$/.test(author))
      return restError(400, `author ${author} is not a person or organization URN`);
    const allowed = author.startsWith("urn:li:organization:")
      ? scopes.includes("r_organization_social") && administered(author)
      : scopes.includes("r_member_social") && author === memberUrn();
    if (!allowed) return forbidden("partnerApiPostsExternal.FINDER-author.20260701");
    const sortBy = q.get("sortBy") ?? "LAST_MODIFIED";
    if (sortBy !== "LAST_MODIFIED" && sortBy !== "CREATED")
      return restError(400, `sortBy ${sortBy} is invalid`);
    const start = Number(q.get("start") ?? 0);
    const count = Number(q.get("count") ?? 10);
    if (!Number.isInteger(start) || start < 0 || !Number.isInteger(count) || count < 1 || count > 100)
      return restError(400, "start must be 0 or more and count 1 to 100");
    const key = (p: FakePost) => (sortBy === "CREATED" ? createdAt(p) : lastModifiedAt(p));
    const all = fake.posts
      .filter((p) => p.author === author && p.lifecycleState === "PUBLISHED")
      .map((p, i) => ({ p, i }))
      .toSorted((a, b) => key(b.p) - key(a.p) || b.i - a.i)
      .map(({ p }) => p);
    const page = all.slice(start, start + count);
    const next = start + count < all.length;
    const self = (from: number) =>
      `/rest/posts?q=author&author=${encodeURIComponent(author)}&start=${from}&count=${count}&sortBy=${sortBy}`;
    return json({
      paging: {
        start,
        count,
        links: next ? [{ type: "application/json", rel: "next", href: self(start + count) }] : [],
      },
      elements: page.map((p) => ({
        id: p.urn,
        author: p.author,
        commentary: p.commentary,
        visibility: p.visibility,
        lifecycleState: p.lifecycleState,
        distribution: p.distribution,
        ...(p.content ? { content: p.content } : {}),
        isReshareDisabledByAuthor: p.isReshareDisabledByAuthor,
        createdAt: createdAt(p),
        lastModifiedAt: lastModifiedAt(p),
        publishedAt: createdAt(p),
      })),
    });
  }

  async function initializeUpload(request: Request, scopes: string[], kind: "image" | "video") {
    const init = (await readBody(request)).initializeUploadRequest ?? {};
    const owner = String(init.owner ?? "");
    if (!mayActAs(scopes, owner)) return forbidden(`${kind}s.ACTION-initializeUpload`);
    const mediaId = `C4E${id()}`;
    const urn = `urn:li:${kind}:${mediaId}`;
    const media: FakeMedia = {
      urn,
      kind,
      owner,
      size: 0,
      received: 0,
      status: "WAITING_UPLOAD",
      pollsLeft: 0,
      parts: [],
      uploadToken: "",
      finalizedWith: null,
    };
    fake.media.push(media);
    const expires = Date.now() + 24 * 60 * 60 * 1000;
    if (kind === "image")
      return json({
        value: {
          uploadUrlExpiresAt: expires,
          uploadUrl: `${fake.origin}/dms-uploads/${mediaId}/image`,
          image: urn,
        },
      });
    const size = Number(init.fileSizeBytes);
    if (!Number.isInteger(size) || size <= 0)
      return restError(400, "fileSizeBytes must be a positive integer");
    media.size = size;
    const partBytes = options.videoPartBytes ?? 4 * 1024 * 1024;
    for (let first = 0; first < size; first += partBytes)
      media.parts.push({ firstByte: first, lastByte: Math.min(size, first + partBytes) - 1, etag: null });
    media.uploadToken = media.parts.length > 1 ? token("utok") : "";
    return json({
      value: {
        uploadUrlsExpireAt: expires,
        video: urn,
        uploadInstructions: media.parts.map((p, i) => ({
          uploadUrl: `${fake.origin}/dms-uploads/${mediaId}/part/${i}`,
          firstByte: p.firstByte,
          lastByte: p.lastByte,
        })),
        uploadToken: media.uploadToken,
      },
    });
  }

  async function upload(request: Request, pathname: string): Promise<Response> {
    const [, , mediaId, what, index] = pathname.split("/");
    const media = fake.media.find((m) => m.urn.endsWith(`:${mediaId}`));
    if (!media) return new Response("Not Found", { status: 404 });
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (what === "image") {
      const auth = caller(request); // image uploads take the member's token
      if (auth instanceof Response) return auth;
      media.size = media.received = bytes.length;
      media.pollsLeft = fake.imageProcessingPolls;
      media.status = media.pollsLeft > 0 ? "PROCESSING" : "AVAILABLE";
      return new Response(null, { status: 201 });
    }
    const part = media.parts[Number(index)];
    if (!part) return new Response("Not Found", { status: 404 });
    if (bytes.length !== part.lastByte - part.firstByte + 1)
      return new Response(`part ${index} must be ${part.lastByte - part.firstByte + 1} bytes`, {
        status: 400,
      });
    if (part.etag === null) media.received += bytes.length;
    part.etag = `/ambry-video/signedId/${mediaId}-${index}-${bytes.length}`;
    const file = fake.videoBytes.get(media.urn) ?? new Uint8Array(media.size);
    file.set(bytes, part.firstByte);
    fake.videoBytes.set(media.urn, file);
    const fresh = onFreshConnection(Object.fromEntries(request.headers));
    fake.partPuts.push({ mediaId: mediaId!, index: Number(index), length: bytes.length, cut: false, fresh });
    return new Response(null, { status: 200, headers: { etag: part.etag } });
  }

  async function finalize(request: Request): Promise<Response> {
    const body = (await readBody(request)).finalizeUploadRequest ?? {};
    const media = fake.media.find((m) => m.urn === body.video && m.kind === "video");
    if (!media) return restError(404, `${body.video} not found`);
    const ids: unknown[] = Array.isArray(body.uploadedPartIds) ? body.uploadedPartIds : [];
    const expected = media.parts.map((p) => p.etag);
    if (expected.includes(null) || media.received !== media.size)
      return restError(400, "Not all parts of the video were uploaded");
    if (ids.length !== expected.length || ids.some((v, i) => v !== expected[i]))
      return restError(400, "uploadedPartIds do not match the uploaded parts");
    if ((body.uploadToken ?? "") !== media.uploadToken) return restError(400, "uploadToken does not match");
    media.finalizedWith = ids as string[];
    media.status = "PROCESSING";
    media.pollsLeft = fake.videoProcessingPolls;
    return new Response(null, { status: 200 });
  }

  /** A comment as the Comments API returns it. */
  function commentJson(c: FakeLinkedInComment) {
    const commentId = c.urn.replace(/^.*,(\d+)\)$/, "$1");
    return {
      id: commentId,
      commentUrn: c.urn,
      $URN: c.urn,
      actor: c.actor,
      object: c.object,
      message: { text: c.text },
      created: { actor: c.actor, time: c.createdAt },
      lastModified: { actor: c.actor, time: c.createdAt },
    };
  }

  /**
   * `POST /rest/socialActions/{urn}/comments` `{actor, object, message: {text}}`: 201 with the comment
   * and its URN in `x-restli-id`. An actor the grant may not act as is 403; an unknown post 404; empty
   * or too long text (1,250) 422 as the Comments API answers; comments closed on the post 403.
   */
  async function createComment(request: Request, target: string, scopes: string[]): Promise<Response> {
    const body = await readBody(request);
    const actor = String(body.actor ?? "");
    if (!mayActAs(scopes, actor)) return forbidden("partnerApiSocialActions.CREATE.20260701");
    const post = fake.posts.find((p) => p.urn === target);
    if (!post || body.object !== target) return restError(404, `${target} does not exist`);
    const text = typeof body.message?.text === "string" ? body.message.text : "";
    if (text.trim() === "") return restError(422, "message.text is required");
    if (text.length > 1250)
      return restError(422, `message.text length ${text.length} exceeds 1250`, {
        errorDetails: {
          inputErrors: [
            { code: "FIELD_LENGTH_TOO_LONG", input: { inputPath: { fieldPath: "message/text" } } },
          ],
        },
      });
    if (fake.commentsClosed.has(target))
      return json(
        {
          status: 403,
          serviceErrorCode: 100,
          code: "ACCESS_DENIED",
          message: "Comments are disabled on this post",
        },
        403,
      );
    const activity = target.replace(/^urn:li:(share|ugcPost):/, "");
    const comment: FakeLinkedInComment = {
      urn: `urn:li:comment:(urn:li:activity:${activity},${id()})`,
      object: target,
      actor,
      text,
      createdAt: (options.now ?? Date.now)(),
    };
    fake.comments.push(comment);
    if (fake.hangAfterReceive) return never();
    return json(commentJson(comment), 201, { "x-restli-id": encodeURIComponent(comment.urn) });
  }

  /** `GET /rest/socialActions/{urn}/comments?start&count`: the post's comments with paging. */
  function listComments(url: URL, target: string): Response {
    const start = Number(url.searchParams.get("start") ?? 0);
    const count = Number(url.searchParams.get("count") ?? 10);
    const all = fake.comments.filter((c) => c.object === target);
    return json({
      elements: all.slice(start, start + count).map(commentJson),
      paging: { start, count, total: all.length, links: [] },
    });
  }

  async function createPost(request: Request, scopes: string[], version: string): Promise<Response> {
    const body = await readBody(request);
    const author = String(body.author ?? "");
    if (!author.startsWith("urn:li:person:") && !author.startsWith("urn:li:organization:"))
      return restError(422, "author must be a person or organization URN");
    if (!mayActAs(scopes, author)) return forbidden("partnerApiPostsExternal.CREATE.20260701");
    const commentary = typeof body.commentary === "string" ? body.commentary : "";
    if (commentary.length > MAX_COMMENTARY)
      return restError(422, `commentary length ${commentary.length} exceeds ${MAX_COMMENTARY}`, {
        errorDetails: {
          inputErrors: [{ code: "FIELD_LENGTH_TOO_LONG", input: { inputPath: { fieldPath: "commentary" } } }],
        },
      });
    const visibility = String(body.visibility ?? "");
    if (!["PUBLIC", "CONNECTIONS", "LOGGED_IN"].includes(visibility))
      return restError(422, `visibility ${visibility} is invalid`);
    if (visibility === "CONNECTIONS" && author.startsWith("urn:li:organization:"))
      return restError(422, "CONNECTIONS visibility is not allowed for an organization author");
    const content = body.content && typeof body.content === "object" ? body.content : null;
    const mediaIds: string[] = content?.media
      ? [content.media.id]
      : Array.isArray(content?.multiImage?.images)
        ? content.multiImage.images.map((i: { id: string }) => i.id)
        : [];
    if (content?.multiImage && (mediaIds.length < 2 || mediaIds.length > 20))
      return restError(422, "multiImage takes 2 to 20 images");
    for (const mediaId of mediaIds) {
      const media = fake.media.find((m) => m.urn === mediaId);
      if (!media) return restError(400, `${mediaId} does not exist`);
      if (media.status !== "AVAILABLE")
        return restError(400, `${mediaId} is not AVAILABLE (${media.status})`);
      if (content?.multiImage && media.kind !== "image")
        return restError(422, "multiImage takes images only");
    }
    const duplicate = fake.posts.find(
      (p) => p.author === author && p.commentary === commentary && commentary !== "",
    );
    if (duplicate)
      return json(
        {
          errorDetailType: "com.linkedin.common.error.BadRequest",
          message: `ERROR :: /commentary :: Content is a duplicate of ${duplicate.urn}`,
          errorDetails: {
            inputErrors: [{ description: "Duplicate post is detected", input: {}, code: "DUPLICATE_POST" }],
          },
          status: 422,
        },
        422,
      );
    const post: FakePost = {
      urn: `urn:li:share:${id()}`,
      author,
      commentary,
      visibility,
      content,
      lifecycleState: String(body.lifecycleState ?? ""),
      isReshareDisabledByAuthor: body.isReshareDisabledByAuthor === true,
      distribution: body.distribution ?? null,
      version,
    };
    fake.posts.push(post);
    postTimes.set(post.urn, (options.now ?? Date.now)());
    if (fake.hangAfterReceive) return never();
    return new Response(null, {
      status: 201,
      headers: { "x-restli-id": post.urn, "x-linkedin-id": post.urn },
    });
  }

  const server = serveFake({
    controls: fake,
    failures,
    route,
    defaultFailure: (status) => {
      if (status === 401)
        return {
          body: {
            status,
            serviceErrorCode: 65600,
            code: "INVALID_ACCESS_TOKEN",
            message: "Invalid access token",
          },
        };
      if (status === 403)
        return {
          body: {
            status,
            serviceErrorCode: 100,
            code: "ACCESS_DENIED",
            message: "Not enough permissions to access: partnerApiPostsExternal.CREATE.20260701",
          },
        };
      if (status === 429)
        // LinkedIn sends no reset header: its quotas reset at midnight UTC.
        return {
          body: {
            status,
            message: "Resource level throttle APPLICATION DAY limit for calls to this resource is reached.",
          },
        };
      if (status >= 500) return { body: { status, message: "Internal Server Error" } };
      return { body: { status, message: "Bad request" } };
    },
  });
  const { cuts, origin, stop } = await behindCutProxy(server, options.cuttable);
  fake.origin = origin;
  fake.stop = stop;
  fake.resetNextPart = ({ keepBytes }) => {
    cutProxyFor(cuts, "resetNextPart").cutNext({
      keepBytes,
      match: ({ method, target }) => method === "PUT" && /^\/dms-uploads\/[^/]+\/part\/\d+$/.test(target),
      onCut: ({ target, headers, received }) => {
        const [, , mediaId, , index] = target.split("/");
        fake.partPuts.push({
          mediaId: mediaId!,
          index: Number(index),
          length: received.length,
          cut: true,
          fresh: onFreshConnection(headers),
        });
      },
    });
  };
  return fake;
}
