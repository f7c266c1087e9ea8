// A faithful local fake of the Threads API (providers.md §4, §14): the OAuth code flow, the short-lived
// token exchanged for a 60-day one and refreshed once 24 h old, /v1.0/me, media containers with a state
// machine (IN_PROGRESS → FINISHED over N status polls, or ERROR / EXPIRED), media pulled from the
// image_url / video_url it is given (really downloaded), carousels, threads_publish (once per
// container), permalinks, the 250-posts / 1,000-replies per 24 h limits, the profile's posts and replies,
// insights, and Graph error bodies (190 for dead tokens, throttling codes with X-Business-Use-Case-Usage).
import { EXPIRED_TOKEN, graphError, graphPage, metaDefaultFailure } from "./meta.ts";
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

/** How a container ends once processed: FINISHED normally, or a configured ERROR / EXPIRED. */
export type ContainerEnd =
  | { status: "FINISHED" }
  | { status: "ERROR"; errorMessage: string }
  | { status: "EXPIRED" };

/** A media container the fake holds. */
export interface FakeContainer {
  id: string;
  mediaType: "TEXT" | "IMAGE" | "VIDEO" | "CAROUSEL";
  text: string | null;
  mediaUrl: string | null;
  isCarouselItem: boolean;
  children: string[];
  replyToId: string | null;
  replyControl: string | null;
  altText: string | null;
  status: "IN_PROGRESS" | "FINISHED" | "ERROR" | "EXPIRED" | "PUBLISHED";
  errorMessage: string | null;
  /** Status polls still answered IN_PROGRESS. */
  pollsLeft: number;
  end: ContainerEnd;
  /** What the fake downloaded from `mediaUrl`. */
  download: { status: number; contentType: string | null; bytes: number } | null;
  mediaId: string | null;
  createdAt: number;
  /** threads_publish calls still answered 9007/2207027 ("not ready, please wait") once it is FINISHED. */
  notReadyAnswers: number;
}

/** A published post (or reply) the fake holds. */
export interface FakeThreadsPost {
  id: string;
  containerId: string;
  mediaType: string;
  text: string;
  /** Carousel item containers; [] otherwise. */
  children: string[];
  replyToId: string | null;
  replyControl: string | null;
  shortcode: string;
  permalink: string;
  timestamp: number;
  /** Its insights (tests set these; GET /{media-id}/insights reports them, missing ones as 0). */
  counts?: Partial<Record<(typeof INSIGHT_METRICS)[number], number>>;
}

/** Settings of the fake; `now` decides token ages, container expiry and the 24 h windows. */
export interface ThreadsFakeOptions {
  /** Status polls an image or video container answers IN_PROGRESS before it is processed (default 2). */
  mediaProcessingPolls?: number;
  /** API-published posts per 24 h (default 250). */
  dailyCap?: number;
  /** Replies per 24 h (default 1,000). */
  replyCap?: number;
  /**
   * threads_publish calls each new container answers 9007/2207027 ("not ready, please wait") after its
   * status reads FINISHED, before it publishes (default 0).
   */
  notReadyAfterFinished?: number;
  /** Redirect URIs the app accepts; null (default) accepts any. */
  redirectUris?: string[] | null;
  now?: () => number;
}

/** The running fake: its origin, what it stored, and its switches. */
export interface ThreadsFake extends FakeControls {
  origin: string;
  stop(): Promise<void>;
  account: { id: string; username: string; name: string; threads_profile_picture_url: string };
  app: { clientId: string; clientSecret: string; redirectUris: string[] | null };
  /** The authorize requests it answered (query parameters). */
  authorizations: Record<string, string>[];
  containers: FakeContainer[];
  posts: FakeThreadsPost[];
  /** IN_PROGRESS polls of containers created from now on. */
  mediaProcessingPolls: number;
  dailyCap: number;
  /** See `ThreadsFakeOptions.notReadyAfterFinished`; read when a container is created. */
  notReadyAfterFinished: number;
  /** While true, threads_publish answers 4/2207051 ("We restrict certain activity…": suspected spam). */
  restrictedForSpam: boolean;
  /** threads_publish requests answered, whatever the answer. */
  publishCalls: number;
  /** The next container created ends this way instead of FINISHED. */
  nextContainerEnds(end: ContainerEnd): void;
  /** Every container still IN_PROGRESS is processed now (FINISHED, or its configured end). */
  finishProcessing(): void;
  /** Every token issued so far answers code 190 from now on. */
  revokeTokens(): void;
  /** A long-lived token for the account, issued `ageMs` ago, valid `ttlMs` from issue (default 60 days). */
  issueToken(options?: { ageMs?: number; ttlMs?: number }): string;
  /** The tokens it issued, with their kind and times. */
  tokens: Map<string, FakeToken>;
}

/** A token the fake issued. */
export interface FakeToken {
  kind: "short" | "long";
  issuedAt: number;
  expiresAt: number;
  revoked: boolean;
}

const DAY_MS = 24 * 60 * 60_000;
const LONG_TTL_S = 60 * 24 * 60 * 60;
const SHORT_TTL_MS = 60 * 60_000;
const MEDIA_TYPES = ["TEXT", "IMAGE", "VIDEO", "CAROUSEL"];
const REPLY_CONTROLS = ["everyone", "accounts_you_follow", "mentioned_only"];
const IMAGE_TYPES = ["image/jpeg", "image/png"];
const VIDEO_TYPES = ["video/mp4", "video/quicktime"];
const CONTAINER_FIELDS = new Set(["id", "status", "error_message"]);
const MEDIA_FIELDS = new Set([
  "id",
  "permalink",
  "text",
  "timestamp",
  "media_type",
  "shortcode",
  "username",
  "is_reply",
  "replied_to",
  "root_post",
]);
const PROFILE_FIELDS = new Set([
  "id",
  "username",
  "name",
  "threads_profile_picture_url",
  "threads_biography",
]);
const INSIGHT_METRICS = ["views", "likes", "replies", "reposts", "quotes", "shares"] as const;

/**
 * Text length as the fake counts it (written apart from the adapter): emoji graphemes count their UTF-8
 * bytes.
 */
function fakeLength(text: string): number {
  let length = 0;
  for (const { segment } of new Intl.Segmenter("en", { granularity: "grapheme" }).segment(text))
    length += /\p{Emoji_Presentation}|\p{Extended_Pictographic}/u.test(segment)
      ? Buffer.byteLength(segment)
      : 1;
  return length;
}

/** Graph time: ISO 8601 with a `+0000` offset. */
function graphTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "+0000");
}

/** Starts the fake on 127.0.0.1 at a free port. */
export async function startThreadsFake(options: ThreadsFakeOptions = {}): Promise<ThreadsFake> {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const now = options.now ?? Date.now;
  const codes = new Map<string, { redirectUri: string; scope: string }>();
  const ends: ContainerEnd[] = [];
  let nextId = 17_890_000_000_000_000n;
  const id = () => String(++nextId);

  const fake: ThreadsFake = {
    ...newControls(failures),
    account: { id: "25000000000000001", username: "alice", name: "Alice", threads_profile_picture_url: "" },
    app: {
      clientId: "1234567890",
      clientSecret: token("secret_"),
      redirectUris: options.redirectUris ?? null,
    },
    authorizations: [],
    containers: [],
    posts: [],
    mediaProcessingPolls: options.mediaProcessingPolls ?? 2,
    dailyCap: options.dailyCap ?? 250,
    notReadyAfterFinished: options.notReadyAfterFinished ?? 0,
    restrictedForSpam: false,
    publishCalls: 0,
    tokens: new Map(),
    nextContainerEnds: (end) => void ends.push(end),
    finishProcessing: () => {
      for (const c of fake.containers.filter((c) => c.status === "IN_PROGRESS")) {
        c.pollsLeft = 0;
        settle(c);
      }
    },
    revokeTokens: () => fake.tokens.forEach((t) => (t.revoked = true)),
    issueToken: ({ ageMs = 0, ttlMs = LONG_TTL_S * 1000 } = {}) => issue("long", now() - ageMs, ttlMs),
  };

  function issue(kind: "short" | "long", issuedAt: number, ttlMs: number): string {
    const value = token(kind === "short" ? "THS" : "THL");
    fake.tokens.set(value, { kind, issuedAt, expiresAt: issuedAt + ttlMs, revoked: false });
    return value;
  }

  const bad = (message: string, code = 100, subcode?: number) => graphError(400, { message, code, subcode });
  const ok = (body: unknown) => json(body, 200, { "x-fb-trace-id": `Atr${fake.requests.length}` });

  /** The request's token (access_token parameter or Bearer header) when valid, else null. */
  function tokenOf(params: Record<string, string>, request: Request): FakeToken | null {
    const value =
      params.access_token ?? /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
    const entry = fake.tokens.get(value);
    return entry && !entry.revoked && entry.expiresAt > now() ? entry : null;
  }

  /** Query and form parameters together, as Graph reads them. */
  async function paramsOf(request: Request, url: URL): Promise<Record<string, string>> {
    const params: Record<string, string> = Object.fromEntries(url.searchParams);
    if (request.method === "POST")
      for (const [key, value] of Object.entries(await readBody(request))) params[key] = String(value);
    return params;
  }

  /** Refuses a `fields` list naming a field the node does not have, as Graph does (code 100). */
  function fieldsOf(
    params: Record<string, string>,
    known: Set<string>,
    fallback: string[],
  ): string[] | Response {
    const fields = params.fields ? params.fields.split(",").map((f) => f.trim()) : fallback;
    const unknown = fields.find((f) => !known.has(f));
    return unknown ? bad(`(#100) Tried accessing nonexisting field (${unknown})`) : fields;
  }

  function refreshContainer(c: FakeContainer): void {
    if (c.status !== "PUBLISHED" && c.status !== "ERROR" && now() - c.createdAt > DAY_MS)
      c.status = "EXPIRED";
  }

  function settle(c: FakeContainer): void {
    c.status = c.end.status;
    c.errorMessage = c.end.status === "ERROR" ? c.end.errorMessage : null;
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

  async function createContainer(params: Record<string, string>): Promise<Response> {
    const mediaType = params.media_type ?? "";
    if (!MEDIA_TYPES.includes(mediaType))
      return bad("Param media_type must be one of {TEXT, IMAGE, VIDEO, CAROUSEL}");
    const isCarouselItem = params.is_carousel_item === "true";
    const text = params.text ?? null;
    if (text !== null && fakeLength(text) > 500)
      return bad("Param text must be at most 500 characters long.");
    if (mediaType === "TEXT" && !text) return bad("Param text is required for TEXT posts");
    if (isCarouselItem && (mediaType === "TEXT" || mediaType === "CAROUSEL"))
      return bad("Only IMAGE and VIDEO containers can be carousel items");
    const replyToId = params.reply_to_id ?? null;
    if (replyToId && !fake.posts.some((p) => p.id === replyToId)) return bad("Param reply_to_id is invalid");
    const replyControl = params.reply_control ?? null;
    if (replyControl && !REPLY_CONTROLS.includes(replyControl))
      return bad(`Param reply_control must be one of {${REPLY_CONTROLS.join(", ")}}`);
    const children = mediaType === "CAROUSEL" ? (params.children ?? "").split(",").filter(Boolean) : [];
    if (mediaType === "CAROUSEL") {
      if (children.length < 2 || children.length > 20) return bad("A carousel takes 2 to 20 items");
      for (const child of children) {
        const item = fake.containers.find((c) => c.id === child);
        if (!item || !item.isCarouselItem) return bad(`Param children: ${child} is not a carousel item`);
        if (item.status !== "FINISHED")
          return bad(`Param children: ${child} is not finished (${item.status})`);
      }
    }
    const mediaUrl =
      mediaType === "IMAGE" ? params.image_url : mediaType === "VIDEO" ? params.video_url : null;
    if ((mediaType === "IMAGE" || mediaType === "VIDEO") && !mediaUrl)
      return bad(`Param ${mediaType === "IMAGE" ? "image_url" : "video_url"} is required`);
    const container: FakeContainer = {
      id: id(),
      mediaType: mediaType as FakeContainer["mediaType"],
      text,
      mediaUrl: mediaUrl ?? null,
      isCarouselItem,
      children,
      replyToId,
      replyControl,
      altText: params.alt_text ?? null,
      status: "IN_PROGRESS",
      errorMessage: null,
      pollsLeft: mediaUrl ? fake.mediaProcessingPolls : 0,
      end: ends.shift() ?? { status: "FINISHED" },
      download: null,
      mediaId: null,
      createdAt: now(),
      notReadyAnswers: fake.notReadyAfterFinished,
    };
    if (mediaUrl) {
      // Meta cURLs the URL: the container fails when it does not answer 200 with a supported file.
      const video = mediaType === "VIDEO";
      const d = await download(mediaUrl);
      container.download = d;
      const types = video ? VIDEO_TYPES : IMAGE_TYPES;
      const limit = video ? 1_000_000_000 : 8_000_000;
      if (d.status !== 200)
        container.end = { status: "ERROR", errorMessage: `FAILED_DOWNLOADING_${video ? "VIDEO" : "IMAGE"}` };
      else if (!types.includes(d.contentType ?? "") || d.bytes > limit)
        container.end = { status: "ERROR", errorMessage: video ? "FAILED_PROCESSING_VIDEO" : "UNKNOWN" };
    }
    if (container.pollsLeft === 0) settle(container);
    fake.containers.push(container);
    return ok({ id: container.id });
  }

  function publish(params: Record<string, string>): Response | Promise<Response> {
    fake.publishCalls++;
    if (fake.restrictedForSpam)
      return graphError(400, {
        message:
          "We restrict certain activity to protect our community. Tell us if you think we made a mistake.",
        code: 4,
        subcode: 2207051,
        isTransient: false,
      });
    const container = fake.containers.find((c) => c.id === params.creation_id);
    if (!container) return bad("Param creation_id is not a valid container id");
    refreshContainer(container);
    if (container.isCarouselItem) return bad("A carousel item cannot be published on its own");
    const notReady = () =>
      bad("The media is not ready to be published. Please wait a moment.", 9007, 2207027);
    if (container.status === "IN_PROGRESS") return notReady();
    // Meta may still be readying the media after the status read FINISHED, and asks to wait.
    if (container.status === "FINISHED" && container.notReadyAnswers > 0) {
      container.notReadyAnswers--;
      return notReady();
    }
    if (container.status === "PUBLISHED") return bad("The media container has already been published");
    if (container.status !== "FINISHED")
      return bad(`The media container cannot be published (${container.status})`);
    const isReply = container.replyToId !== null;
    const since = now() - DAY_MS;
    const used = fake.posts.filter((p) => (p.replyToId !== null) === isReply && p.timestamp > since).length;
    const cap = isReply ? (options.replyCap ?? 1000) : fake.dailyCap;
    if (used >= cap)
      return graphError(400, {
        message:
          `The profile reached its publishing limit: maximum number of ` +
          `${isReply ? "replies" : "posts"} (${cap}) in 24 hours`,
        code: 9,
        subcode: 2207042,
      });
    const shortcode = token("").slice(0, 11);
    const post: FakeThreadsPost = {
      id: id(),
      containerId: container.id,
      mediaType: { TEXT: "TEXT_POST", IMAGE: "IMAGE", VIDEO: "VIDEO", CAROUSEL: "CAROUSEL_ALBUM" }[
        container.mediaType
      ],
      text: container.text ?? "",
      children: container.children,
      replyToId: container.replyToId,
      replyControl: container.replyControl,
      shortcode,
      permalink: `https://www.threads.net/@${fake.account.username}/post/${shortcode}`,
      timestamp: now(),
    };
    fake.posts.push(post);
    container.status = "PUBLISHED";
    container.mediaId = post.id;
    if (fake.hangAfterReceive) return never();
    return ok({ id: post.id });
  }

  function postJson(post: FakeThreadsPost, fields: string[]): Record<string, unknown> {
    const all: Record<string, unknown> = {
      id: post.id,
      permalink: post.permalink,
      text: post.text,
      timestamp: graphTime(post.timestamp),
      media_type: post.mediaType,
      shortcode: post.shortcode,
      username: fake.account.username,
      is_reply: post.replyToId !== null,
      ...(post.replyToId ? { replied_to: { id: post.replyToId } } : {}),
    };
    return Object.fromEntries(Object.entries(all).filter(([key]) => key === "id" || fields.includes(key)));
  }

  function listPosts(params: Record<string, string>, replies: boolean, url: URL): Response {
    const fields = fieldsOf(params, MEDIA_FIELDS, ["id"]);
    if (fields instanceof Response) return fields;
    const newest = fake.posts
      .filter((p) => (p.replyToId !== null) === replies)
      .toSorted((a, b) => b.timestamp - a.timestamp);
    const { page, paging } = graphPage(newest, params, url);
    return ok({ data: page.map((p) => postJson(p, fields)), paging });
  }

  async function route(request: Request, url: URL): Promise<Response> {
    const { pathname } = url;
    const method = request.method;
    const params = await paramsOf(request, url);
    if (method === "GET" && pathname === "/oauth/authorize") {
      // The signed-in user approves at once; a browser would follow this redirect.
      fake.authorizations.push(Object.fromEntries(url.searchParams));
      const redirectUri = params.redirect_uri ?? "";
      if (params.client_id !== fake.app.clientId)
        return new Response("Invalid platform app", { status: 400 });
      if (fake.app.redirectUris && !fake.app.redirectUris.includes(redirectUri))
        return new Response("Error validating verification code: redirect_uri is not allowed", {
          status: 400,
        });
      if (params.response_type !== "code") return new Response("response_type must be code", { status: 400 });
      const code = token("AQ");
      codes.set(code, { redirectUri, scope: params.scope ?? "" });
      const target = new URL(redirectUri);
      target.searchParams.set("code", code);
      if (params.state) target.searchParams.set("state", params.state);
      return new Response(null, { status: 302, headers: { location: `${target}#_` } });
    }
    if (method === "POST" && pathname === "/oauth/access_token") {
      if (params.client_id !== fake.app.clientId)
        return bad("Error validating application. Invalid application ID.", 101);
      if (params.client_secret !== fake.app.clientSecret) return bad("Error validating client secret.", 1);
      const grant = codes.get(params.code ?? "");
      if (params.grant_type !== "authorization_code" || !grant)
        return bad("Invalid verification code format.", 100, 36008);
      if (grant.redirectUri !== params.redirect_uri)
        return bad(
          "Error validating verification code. Please make sure your redirect_uri is identical.",
          100,
          36008,
        );
      codes.delete(params.code!);
      return ok({ access_token: issue("short", now(), SHORT_TTL_MS), user_id: Number(fake.account.id) });
    }
    if (method === "GET" && pathname === "/access_token") {
      if (params.grant_type !== "th_exchange_token") return bad("Unsupported grant_type");
      if (params.client_secret !== fake.app.clientSecret) return bad("Error validating client secret.", 1);
      const short = tokenOf(params, request);
      if (!short || short.kind !== "short") return graphError(400, EXPIRED_TOKEN);
      return ok({
        access_token: issue("long", now(), LONG_TTL_S * 1000),
        token_type: "bearer",
        expires_in: LONG_TTL_S,
      });
    }
    if (method === "GET" && pathname === "/refresh_access_token") {
      if (params.grant_type !== "th_refresh_token") return bad("Unsupported grant_type");
      const long = tokenOf(params, request);
      if (!long || long.kind !== "long") return graphError(400, EXPIRED_TOKEN);
      if (now() - long.issuedAt < DAY_MS)
        return bad("The access token cannot be refreshed before it is 24 hours old");
      return ok({
        access_token: issue("long", now(), LONG_TTL_S * 1000),
        token_type: "bearer",
        expires_in: LONG_TTL_S,
      });
    }
    const node = /^\/v1\.0\/([^/]+)(?:\/([a-z_]+))?$/.exec(pathname);
    if (!node) return bad(`Unknown path components: ${pathname}`, 2500);
    if (!tokenOf(params, request)) return graphError(400, EXPIRED_TOKEN);
    const [, nodeId, edge] = node;
    const isUser = nodeId === "me" || nodeId === fake.account.id;
    if (isUser && !edge && method === "GET") {
      const fields = fieldsOf(params, PROFILE_FIELDS, ["id"]);
      if (fields instanceof Response) return fields;
      const profile: Record<string, unknown> = { ...fake.account, threads_biography: "" };
      return ok(
        Object.fromEntries(Object.entries(profile).filter(([k]) => k === "id" || fields.includes(k))),
      );
    }
    if (isUser && edge === "threads" && method === "POST") return createContainer(params);
    if (isUser && edge === "threads_publish" && method === "POST") return publish(params);
    if (isUser && edge === "threads" && method === "GET") return listPosts(params, false, url);
    if (isUser && edge === "replies" && method === "GET") return listPosts(params, true, url);
    if (isUser && edge === "threads_publishing_limit" && method === "GET") {
      const since = now() - DAY_MS;
      const recent = fake.posts.filter((p) => p.timestamp > since);
      return ok({
        data: [
          {
            quota_usage: recent.filter((p) => p.replyToId === null).length,
            config: { quota_total: fake.dailyCap, quota_duration: 86400 },
            reply_quota_usage: recent.filter((p) => p.replyToId !== null).length,
            reply_config: { quota_total: options.replyCap ?? 1000, quota_duration: 86400 },
          },
        ],
      });
    }
    const container = fake.containers.find((c) => c.id === nodeId);
    if (container && !edge && method === "GET") {
      const fields = fieldsOf(params, CONTAINER_FIELDS, ["id"]);
      if (fields instanceof Response) return fields;
      refreshContainer(container);
      if (container.status === "IN_PROGRESS") {
        if (container.pollsLeft > 0) container.pollsLeft--;
        else settle(container);
      }
      return ok({
        id: container.id,
        ...(fields.includes("status") ? { status: container.status } : {}),
        ...(fields.includes("error_message") && container.errorMessage
          ? { error_message: container.errorMessage }
          : {}),
      });
    }
    const post = fake.posts.find((p) => p.id === nodeId);
    if (post && !edge && method === "GET") {
      const fields = fieldsOf(params, MEDIA_FIELDS, ["id"]);
      return fields instanceof Response ? fields : ok(postJson(post, fields));
    }
    if (post && edge === "insights" && method === "GET") {
      const metrics = (params.metric ?? "").split(",").filter(Boolean);
      const unknown = metrics.find((m) => !(INSIGHT_METRICS as readonly string[]).includes(m));
      if (unknown || metrics.length === 0)
        return bad(`Param metric must be a list of ${INSIGHT_METRICS.join(", ")}`);
      return ok({
        data: metrics.map((name) => ({
          name,
          period: "lifetime",
          values: [{ value: post.counts?.[name as (typeof INSIGHT_METRICS)[number]] ?? 0 }],
          title: name[0]!.toUpperCase() + name.slice(1),
          id: `${post.id}/insights/${name}/lifetime`,
        })),
      });
    }
    return bad(`Unsupported ${method} request. Object with ID '${nodeId}' does not exist`, 100, 33);
  }

  const server = serveFake({ controls: fake, failures, route, defaultFailure: metaDefaultFailure });
  fake.origin = server.origin;
  fake.stop = server.stop;
  fake.account.threads_profile_picture_url = `${server.origin}/pictures/alice.jpg`;
  return fake;
}
