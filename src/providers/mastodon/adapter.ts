import type { NetworkDefinition } from "../registry.ts";
import { expectJson, providerFetch, readJson, responseDetails } from "../http.ts";
import { base, bearer, createMastodonPublisher } from "./publish.ts";
import { countGraphemes } from "../text.ts";
import {
  ProviderError,
  type ChannelLimits,
  type ConnectedAccount,
  type Immediate,
  type ItemProblem,
  type MediaFacts,
  type MetricsResult,
  type NetworkRules,
  type OAuthAdapter,
  type OAuthConnector,
  type ProviderDeps,
} from "../types.ts";

/** What the Mastodon adapter is built with; the poll settings bound media processing waits. */
export interface MastodonDeps extends ProviderDeps {
  /** Pause between `GET /api/v1/media/{id}` polls while media is processing, ms (default 1000; tests ~10). */
  mediaPollIntervalMs?: number;
  /** Polls before an upload still processing becomes a `transient` failure (default 60). */
  mediaMaxPolls?: number;
}

/** Limits of a stock Mastodon instance, used when `/api/v2/instance` does not say. */
export const MASTODON_DEFAULT_LIMITS: ChannelLimits = {
  maxCharacters: 500,
  maxImages: 4,
  maxVideos: 1,
  maxImageBytes: 16_777_216,
};

/**
 * Characters every URL counts for, whatever its length (`characters_reserved_per_url`, fixed at 23 in
 * Mastodon).
 */
export const MASTODON_URL_LENGTH = 23;

/** Longest media description (alt text) a stock instance accepts. */
const DESCRIPTION_LIMIT = 1500;
const SCOPES = "read write";

/** Mastodon registers Herald per instance, so both registration steps are there. */
export type MastodonAdapter = Immediate<OAuthAdapter> &
  Required<Pick<OAuthConnector, "registerApp" | "appIsKnown">>;

/** Mastodon's rules: limits come from each instance; no documented daily cap. */
export const MASTODON_RULES: NetworkRules = {
  channel: "mastodon",
  displayName: "Mastodon",
  defaultLimits: MASTODON_DEFAULT_LIMITS,
  optionsSchema: null,
  checkItem: (input) => checkMastodonItem(input),
  measureText: ({ text, limits }) => [
    { used: mastodonLength(text), limit: limits.maxCharacters, unit: "characters" },
  ],
  supportsThreads: true,
  dailyCap: null,
  monthlyPostLimit: null,
};

/** The Mastodon adapter: OAuth per instance, statuses with Idempotency-Key, media with processing polls. */
export function createMastodonAdapter(deps: MastodonDeps): MastodonAdapter {
  return {
    ...MASTODON_RULES,
    checkItem: checkMastodonItem,
    connection: {
      kind: "oauth",
      registration: "per-instance",
      form: {
        origin: {
          label: "Instance",
          inSentence: "instance",
          hint: "Its address, like https://mastodon.social. You approve Herald there, then come back here.",
        },
      },
    },
    idempotentCreate: true,
    pendingChecksRepeatable: false,
    refreshAheadMs: null,
    ...createMastodonPublisher(deps, (input) => call(deps, input)),

    metricsBatchSize: 20,

    /** `GET /api/v1/statuses/{id}` for each status (works on every Mastodon version): its counts. */
    fetchMetrics: (input) => fetchMastodonMetrics(deps, input),

    async refreshCredentials(): Promise<never> {
      throw new ProviderError(
        "auth_revoked",
        "Mastodon access tokens do not expire; the account must be connected again",
        { operation: "refreshCredentials" },
      );
    },

    registerApp: (input) => registerMastodonApp(deps, input),

    authorizationUrl({ origin, clientId, redirectUri, state, codeChallenge }) {
      const query = new URLSearchParams({
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        scope: SCOPES,
        state,
        code_challenge: codeChallenge,
        code_challenge_method: "S256",
      });
      return `${base(origin)}/oauth/authorize?${query}`;
    },

    completeAuthorization: (input) => connectMastodonAccount(deps, input),

    /** A client-credentials grant: 401 `invalid_client` means the instance no longer knows the app. */
    appIsKnown: (input) => mastodonAppIsKnown(deps, input),
  };
}

/**
 * Mastodon's rules for one status: length in graphemes with every URL counted as 23 characters and a
 * remote mention as its local part; at most `maxImages` attachments, and a video (or audio) only alone.
 */
export function checkMastodonItem(input: {
  text: string;
  media: MediaFacts[];
  limits: ChannelLimits;
}): ItemProblem[] {
  const { text, media, limits } = input;
  const problems: ItemProblem[] = [];
  const length = mastodonLength(text);
  if (length > limits.maxCharacters)
    problems.push({
      pointer: "",
      detail:
        `text is ${length} characters; this Mastodon instance allows ${limits.maxCharacters} (each ` +
        `URL counts as ${MASTODON_URL_LENGTH})`,
    });
  if (text.trim() === "" && media.length === 0)
    problems.push({ pointer: "", detail: "a status needs text or media" });
  const isVideo = (m: { contentType: string }) =>
    m.contentType.startsWith("video/") || m.contentType.startsWith("audio/");
  const videos = media.filter(isVideo).length;
  if (videos > limits.maxVideos)
    problems.push({
      pointer: "/media",
      detail: `at most ${limits.maxVideos} video or audio file per status`,
    });
  else if (videos > 0 && media.length > videos)
    problems.push({
      pointer: "/media",
      detail: "a video or audio file cannot be combined with images on Mastodon",
    });
  media.forEach((m, i) => {
    if (i === limits.maxImages)
      problems.push({
        pointer: `/media/${i}`,
        detail: `at most ${limits.maxImages} media attachments per status on this instance`,
      });
    if (!m.contentType.startsWith("image/") && !isVideo(m))
      problems.push({ pointer: `/media/${i}`, detail: `${m.contentType} cannot be attached on Mastodon` });
    if (m.contentType.startsWith("image/") && m.byteSize > limits.maxImageBytes)
      problems.push({
        pointer: `/media/${i}`,
        detail: `image is ${m.byteSize} bytes; this instance accepts at most ${limits.maxImageBytes}`,
      });
    if (m.altText && countGraphemes(m.altText) > DESCRIPTION_LIMIT)
      problems.push({
        pointer: `/media/${i}`,
        detail: `alt text is longer than ${DESCRIPTION_LIMIT} characters`,
      });
  });
  return problems;
}

/**
 * Status length as Mastodon counts it (StatusLengthValidator): URLs are 23, `@user@domain` counts as
 * `@user`.
 */
export function mastodonLength(text: string): number {
  const counted = text
    // Greedy match (linear time), then the trailing punctuation a sentence adds is given back.
    .replace(/https?:\/\/[^\s<>"]+/g, (url) => {
      const trailing = /[.,;:!?)\]']*$/.exec(url)![0];
      return "x".repeat(MASTODON_URL_LENGTH) + trailing;
    })
    .replace(/(^|[^\w/])@(\w+)@[a-z0-9.-]*[a-z0-9]/gi, "$1@$2");
  return countGraphemes(counted);
}

/** X-RateLimit-Reset is an ISO-8601 time with microseconds (`2026-01-01T00:05:00.123456Z`). */
export function mastodonRetryAt(headers: Headers): number | null {
  const raw = headers.get("x-ratelimit-reset");
  if (!raw) return null;
  const ms = Date.parse(raw.replace(/(\.\d{3})\d+/, "$1"));
  return Number.isNaN(ms) ? null : ms;
}

/** Maps a Mastodon 4xx to a failure kind: tokens never expire, so 401/403 mean the grant is gone. */
async function mastodonError(input: { operation: string; response: Response }): Promise<ProviderError> {
  const { operation, response } = input;
  const body = await readJson(response);
  const networkText = typeof body?.error === "string" ? body.error : null;
  const message =
    [networkText, body?.error_description].filter((v) => typeof v === "string" && v !== "").join(": ") ||
    `${operation} failed with HTTP ${response.status}`;
  const details = responseDetails({
    operation,
    response,
    errorCode: body?.error && /^[a-z_]+$/.test(body.error) ? body.error : null,
  });
  if (response.status === 401 || response.status === 403)
    return new ProviderError("auth_revoked", message, details);
  if (operation === "POST /oauth/token" && body?.error === "invalid_grant")
    return new ProviderError("auth_revoked", message, details);
  return new ProviderError("rejected", message, details);
}

/** One call to the instance with its rate-limit reading; a refusal becomes a typed ProviderError. */
async function call(
  deps: MastodonDeps,
  input: {
    operation: string;
    url: string;
    init?: RequestInit;
    idempotent: boolean;
  },
): Promise<Response> {
  const response = await providerFetch({ deps, ...input, retryAt: mastodonRetryAt });
  if (!response.ok && response.status !== 206)
    throw await mastodonError({ operation: input.operation, response });
  return response;
}

/** Limits from `GET /api/v2/instance` → `configuration`; an older server without v2 gets the defaults. */
async function readInstanceLimits(
  deps: MastodonDeps,
  input: {
    origin: string;
    headers: Record<string, string>;
  },
): Promise<ChannelLimits> {
  const operation = "GET /api/v2/instance";
  const response = await providerFetch({
    deps,
    operation,
    url: `${base(input.origin)}/api/v2/instance`,
    init: { headers: input.headers },
    idempotent: true,
    retryAt: mastodonRetryAt,
  });
  const configuration = response.ok ? (await readJson(response))?.configuration : null;
  const positive = (value: unknown, fallback: number) =>
    typeof value === "number" && Number.isInteger(value) && value > 0 ? value : fallback;
  return {
    maxCharacters: positive(configuration?.statuses?.max_characters, MASTODON_DEFAULT_LIMITS.maxCharacters),
    maxImages: positive(configuration?.statuses?.max_media_attachments, MASTODON_DEFAULT_LIMITS.maxImages),
    maxVideos: MASTODON_DEFAULT_LIMITS.maxVideos,
    maxImageBytes: positive(
      configuration?.media_attachments?.image_size_limit,
      MASTODON_DEFAULT_LIMITS.maxImageBytes,
    ),
  };
}

/** Mastodon as the registry lists it. */
export const MASTODON_NETWORK: NetworkDefinition = {
  rules: MASTODON_RULES,
  // DESIGN.md "Network apps, API origins and storage engines": the documented origins.
  // Instances are chosen per connection; this is only the default.
  origins: { api: "https://mastodon.social", auth: "https://mastodon.social" },
  create: createMastodonAdapter,
};

async function fetchMastodonMetrics(
  deps: MastodonDeps,
  { destination, targets }: Parameters<NonNullable<MastodonAdapter["fetchMetrics"]>>[0],
): Promise<MetricsResult[]> {
  const results: MetricsResult[] = [];
  for (const { providerObjectId } of targets) {
    const operation = "GET /api/v1/statuses/{id}";
    const response = await providerFetch({
      deps,
      operation,
      url: `${base(destination.origin)}/api/v1/statuses/${encodeURIComponent(providerObjectId)}`,
      init: { headers: bearer(destination) },
      idempotent: true,
      retryAt: mastodonRetryAt,
    });
    if (response.status === 404) {
      results.push({
        providerObjectId,
        kind: "missing",
        reason: "the instance no longer has the status",
      });
      continue;
    }
    if (!response.ok) throw await mastodonError({ operation, response });
    const status = await expectJson({ operation, response });
    const count = (value: unknown) => (typeof value === "number" && value >= 0 ? value : 0);
    results.push({
      providerObjectId,
      kind: "metrics",
      values: {
        comments: count(status.replies_count),
        reactions: count(status.favourites_count),
        // Quotes exist from Mastodon 4.5; older instances leave the field out.
        shares: count(status.reblogs_count) + count(status.quotes_count),
      },
      providerAsOf: null,
    });
  }
  return results;
}

async function registerMastodonApp(
  deps: MastodonDeps,
  { origin, redirectUri, clientName, website }: Parameters<NonNullable<MastodonAdapter["registerApp"]>>[0],
) {
  const operation = "POST /api/v1/apps";
  const response = await call(deps, {
    operation,
    url: `${base(origin)}/api/v1/apps`,
    init: {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        client_name: clientName,
        redirect_uris: redirectUri,
        scopes: SCOPES,
        website,
      }),
    },
    idempotent: true, // a second app registration is harmless
  });
  const app = await expectJson({ operation, response });
  return { clientId: String(app.client_id), clientSecret: String(app.client_secret) };
}

async function connectMastodonAccount(
  deps: MastodonDeps,
  {
    origin,
    clientId,
    clientSecret,
    redirectUri,
    code,
    codeVerifier,
  }: Parameters<NonNullable<MastodonAdapter["completeAuthorization"]>>[0],
): Promise<ConnectedAccount[]> {
  const tokenOperation = "POST /oauth/token";
  const tokenResponse = await call(deps, {
    operation: tokenOperation,
    url: `${base(origin)}/oauth/token`,
    init: {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "authorization_code",
        code,
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uri: redirectUri,
        code_verifier: codeVerifier,
        scope: SCOPES,
      }),
    },
    idempotent: false, // the code is single-use: an unanswered exchange cannot be repeated
  });
  const token = await expectJson({ operation: tokenOperation, response: tokenResponse });
  const accessToken = String(token.access_token);
  const headers = { authorization: `Bearer ${accessToken}` };
  const accountOperation = "GET /api/v1/accounts/verify_credentials";
  const account = await expectJson({
    operation: accountOperation,
    response: await call(deps, {
      operation: accountOperation,
      url: `${base(origin)}/api/v1/accounts/verify_credentials`,
      init: { headers },
      idempotent: true,
    }),
  });
  return [
    {
      externalId: String(account.id),
      handle: String(account.username),
      displayName: account.display_name || String(account.username),
      profileImageUrl: typeof account.avatar === "string" ? account.avatar : null,
      credentials: { accessToken, clientId, clientSecret, scope: token.scope ?? SCOPES },
      limits: await readInstanceLimits(deps, { origin, headers }),
    },
  ];
}

async function mastodonAppIsKnown(
  deps: MastodonDeps,
  { origin, clientId, clientSecret }: Parameters<NonNullable<MastodonAdapter["appIsKnown"]>>[0],
) {
  const operation = "POST /oauth/token";
  const body = new URLSearchParams({
    grant_type: "client_credentials",
    client_id: clientId,
    client_secret: clientSecret,
    scope: "read",
  });
  const response = await providerFetch({
    deps,
    operation,
    url: `${base(origin)}/oauth/token`,
    idempotent: true,
    retryAt: mastodonRetryAt,
    init: { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body },
  });
  if (response.ok) return true;
  const error = (await readJson(response))?.error;
  if (response.status === 401 && error === "invalid_client") return false;
  throw await mastodonError({ operation, response });
}
