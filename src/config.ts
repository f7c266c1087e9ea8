import { resolve } from "node:path";
import { parseCidrList } from "./lib/client-address.ts";

/** Everything Herald can be configured with; read once from HERALD_* variables by `loadConfig`. */
export interface Config {
  host: string;
  port: number;
  /** Public origin without a trailing slash; the API base is `<baseUrl>/v1`. */
  baseUrl: string;
  dataDir: string;
  /** PostgreSQL connection URL (HERALD_DATABASE_URL); null stores everything in <dataDir>/herald.db. */
  databaseUrl: string | null;
  /** Connections each process keeps to PostgreSQL (HERALD_DATABASE_POOL). */
  databasePool: number;
  /**
   * When a SQLite commit reaches the disk (HERALD_SQLITE_SYNC): `full` (default) syncs the WAL before
   * a commit returns, so nothing Herald acknowledged is lost to a power cut; `normal` syncs only at
   * checkpoints (faster; a power cut may drop the last acknowledged writes, never corrupt the file).
   */
  sqliteSync: "full" | "normal";
  storage: "local" | "s3";
  s3: {
    endpoint: string | null;
    bucket: string | null;
    accessKey: string | null;
    secretKey: string | null;
    region: string;
  };
  /** Master key for secrets at rest and signed values; null means "use or create <dataDir>/secret.key". */
  secretKey: string | null;
  smtpUrl: string | null;
  mailFrom: string;
  feedbackTo: string | null;
  slackBotToken: string | null;
  /** Origin of Slack's Web API (HERALD_SLACK_API_BASE, default https://slack.com; tests point it at a fake). */
  slackApiBase: string;
  billingMode: "disabled" | "processor_test" | "processor_live";
  /** Stripe settings of the processor modes (docs/billing.md); null values only when billing is disabled. */
  billing: BillingConfig;
  /** HERALD_SIGNUP; null when unset: the installation's own setting decides (modules/installation). */
  signup: "open" | "closed" | null;
  /**
   * Whether a new account waits for its address to be confirmed (HERALD_SIGNUP_CONFIRM_EMAIL): `auto`
   * (default) when mail can be sent, i.e. HERALD_SMTP_URL is set; `on` always; `off` never.
   */
  signupConfirmEmail: "auto" | "on" | "off";
  /** POST /v1/signup-intents and /v1/cli-authorizations per client address per hour, together. */
  signupRequestsPerHour: number;
  /** Requests per minute per credential before 429. */
  rateLimitPerMinute: number;
  /** Failed authentications (401) per minute per client address before every request from it is 429. */
  authFailuresPerMinute: number;
  /**
   * The reverse proxies whose `X-Forwarded-For` names the client (HERALD_TRUSTED_PROXIES, CIDR ranges
   * or addresses); empty: the socket's peer is the client.
   */
  trustedProxies: string[];
  /** One structured log line per request (HERALD_ACCESS_LOG=0 turns it off). */
  accessLog: boolean;
  /** When set (HERALD_METRICS_TOKEN), GET /metrics requires it as a bearer token. */
  metricsToken: string | null;
  /** Test-only: admit http:// loopback origins for webhooks and providers. */
  devAllowPrivateNetwork: boolean;
  /**
   * What the operator set for each network (HERALD_<CH>_CLIENT_ID, …), by channel; the registry fills
   * in the origins an adapter documents for what is not set.
   */
  networks: Record<string, NetworkSettings>;
  /** Publishing engine settings. */
  engine: {
    /** A scheduled post found later than this past its time becomes `missed` instead of going out late. */
    missedToleranceMs: number;
    /** Minimum time between two posts on one destination (0: none). */
    minSpacingMs: number;
    /** Per-channel daily cap overrides (HERALD_DAILY_CAP_<CHANNEL>). */
    dailyCapOverrides: Record<string, number>;
    /**
     * The operator's monthly post limits (HERALD_<CH>_MONTHLY_POST_LIMIT) for a network whose rules carry
     * one (X: the contract's `x_usage.limit`, 50 when unset).
     */
    monthlyPostLimitOverrides: Record<string, number>;
    /** Timeout of one provider HTTP call. */
    providerTimeoutMs: number;
    /**
     * How many posts one process publishes at once (HERALD_PUBLISH_CONCURRENCY, 64): across
     * destinations only, since a destination has one publication in flight at a time. Networks answer
     * in 100–500 ms, so the calls in flight, not CPU, bound a process; 64 keeps 10,000 posts due at
     * once to a 200 ms network within a minute (bench/slow-network.ts).
     */
    concurrency: number;
    /** How long a claim on a post lasts without renewal (a dead process's posts are examined after it). */
    leaseMs: number;
  };
  /** How long rows that grow with every action are kept (docs/operations.md#retention). */
  retention: RetentionConfig;
}

/**
 * Retention of the tables that grow with every action (HERALD_RETENTION_*); a span of 0 keeps the
 * rows for ever (audit and analytics only: the outbox and the delivery logs always have a bound).
 */
export interface RetentionConfig {
  /** Outbox events, counted from when they were fanned out to webhooks (HERALD_RETENTION_EVENTS_DAYS). */
  eventsMs: number;
  /** Finished webhook deliveries and chat messages, from their creation (HERALD_RETENTION_DELIVERIES_DAYS). */
  deliveriesMs: number;
  /** Audit records (HERALD_RETENTION_AUDIT_DAYS); 0: kept for ever. */
  auditMs: number;
  /** The history of analytics fetches (HERALD_RETENTION_ANALYTICS_DAYS); 0: kept for ever. */
  analyticsSnapshotsMs: number;
  /** Rows one cleanup statement deletes at most (HERALD_RETENTION_BATCH_SIZE). */
  batchSize: number;
}

/** Stripe's keys and prices and Herald's trial and grace lengths (HERALD_STRIPE_*, HERALD_BILLING_*). */
export interface BillingConfig {
  /** `sk_test_…`/`rk_test_…` with processor_test, `sk_live_…`/`rk_live_…` with processor_live. */
  stripeSecretKey: string | null;
  /** `whsec_…`: the signing secret of the webhook endpoint `<origin>/billing/stripe/webhook`. */
  stripeWebhookSecret: string | null;
  /** Recurring per-workspace prices (`price_…`), billed by quantity = workspaces. */
  priceMonthly: string | null;
  priceYearly: string | null;
  /** Origin of Stripe's API (HERALD_STRIPE_API_BASE, default https://api.stripe.com; tests use a fake). */
  stripeApiBase: string;
  /** How long `past_due` keeps working (entitlement `grace`) before `read_only`. */
  gracePeriodMs: number;
  /** Trial from the account's creation, carried into the first checkout; 0: no trial. */
  trialMs: number;
}

/**
 * A network's app settings as the operator gave them (HERALD_<CH>_…); null: not set. Origins not set
 * are the adapter's own (`NetworkDefinition.origins`), so config names no network.
 */
export interface NetworkSettings {
  clientId: string | null;
  clientSecret: string | null;
  /** Origin of the REST API (HERALD_<CH>_API_BASE). */
  apiBase: string | null;
  /** Origin of the sign-in page the user is sent to (HERALD_<CH>_AUTH_BASE). */
  authBase: string | null;
  /** Origin of the token endpoint (HERALD_<CH>_TOKEN_BASE, default the API base). */
  tokenBase: string | null;
  /** Scopes to ask for instead of the adapter's own set (HERALD_<CH>_SCOPES, as the network writes them). */
  scopes: string | null;
  /**
   * The API version to send instead of the network's default (HERALD_<CH>_API_VERSION); its format is
   * the network's and is checked when the registry is built (`NetworkDefinition.apiVersion`).
   */
  apiVersion: string | null;
}

/** The network settings variables: HERALD_<CH>_<SETTING>, read for every <CH> that appears. */
const NETWORK_SETTING =
  /^HERALD_([A-Z0-9]+)_(CLIENT_ID|CLIENT_SECRET|API_BASE|AUTH_BASE|TOKEN_BASE|SCOPES|API_VERSION)$/;

/** The channels the environment names settings for (`x` from HERALD_X_CLIENT_ID, …). */
function channelsIn(env: Env, pattern: RegExp): string[] {
  const channels = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    const match = pattern.exec(name);
    if (match && value !== undefined) channels.add(match[1]!.toLowerCase());
  }
  return [...channels].sort();
}

function networkSettings(env: Env): Record<string, NetworkSettings> {
  const settings: Record<string, NetworkSettings> = {};
  for (const channel of channelsIn(env, NETWORK_SETTING)) {
    const prefix = `HERALD_${channel.toUpperCase()}`;
    const origin = (name: string) => url(env, name, ["http:", "https:"])?.replace(/\/+$/, "") ?? null;
    settings[channel] = {
      clientId: text(env, `${prefix}_CLIENT_ID`, null),
      clientSecret: text(env, `${prefix}_CLIENT_SECRET`, null),
      apiBase: origin(`${prefix}_API_BASE`),
      authBase: origin(`${prefix}_AUTH_BASE`),
      tokenBase: origin(`${prefix}_TOKEN_BASE`),
      scopes: text(env, `${prefix}_SCOPES`, null),
      apiVersion: text(env, `${prefix}_API_VERSION`, null)?.trim() || null,
    };
  }
  return settings;
}

/** A bad HERALD_* value; the message is one line naming the variable. */
export class ConfigError extends Error {}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string, fallback: string): string;
function text(env: Env, name: string, fallback: null): string | null;
function text(env: Env, name: string, fallback: string | null): string | null {
  const value = env[name];
  return value === undefined || value === "" ? fallback : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name, null);
  if (raw === null) return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got ${shown(raw)}`);
  }
  return Number(raw);
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name, fallback);
  if (!allowed.includes(raw as T))
    throw new ConfigError(`${name} must be one of ${allowed.join(", ")}, got ${shown(raw)}`);
  return raw as T;
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const raw = text(env, name, null);
  if (raw === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigError(`${name} must be a URL, got ${shown(redact(raw))}`);
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(`${name} must use ${protocols.join(" or ")}, got ${shown(parsed.protocol)}`);
  }
  return raw;
}

/**
 * Hides credentials embedded in a URL before it reaches a message. The value did not parse, so
 * where its user-info ends is unknown: everything after the scheme up to the last `@` goes (a
 * password may itself hold `/` or `@`).
 */
function redact(raw: string): string {
  const at = raw.lastIndexOf("@");
  if (at < 0) return raw;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(raw)?.[0] ?? "";
  return `${scheme}***${raw.slice(at)}`;
}

/** A value quoted for a one-line message (newlines and quotes escaped). */
function shown(raw: string): string {
  return JSON.stringify(raw);
}

function dailyCapOverrides(env: Env): Record<string, number> {
  const caps: Record<string, number> = {};
  for (const channel of channelsIn(env, /^HERALD_DAILY_CAP_([A-Z0-9]+)$/)) {
    const name = `HERALD_DAILY_CAP_${channel.toUpperCase()}`;
    if (text(env, name, null) !== null) caps[channel] = integer(env, name, 0, 0, 1_000_000);
  }
  return caps;
}

function monthlyPostLimitOverrides(env: Env): Record<string, number> {
  const limits: Record<string, number> = {};
  for (const channel of channelsIn(env, /^HERALD_([A-Z0-9]+)_MONTHLY_POST_LIMIT$/)) {
    const name = `HERALD_${channel.toUpperCase()}_MONTHLY_POST_LIMIT`;
    if (text(env, name, null) !== null) limits[channel] = integer(env, name, 0, 1, 1_000_000);
  }
  return limits;
}

const DAY_MS = 86_400_000;

/** HERALD_RETENTION_*: the defaults keep a year of audit and 400 days of analytics history. */
function retentionConfig(env: Env): RetentionConfig {
  return {
    eventsMs: integer(env, "HERALD_RETENTION_EVENTS_DAYS", 30, 1, 3650) * DAY_MS,
    deliveriesMs: integer(env, "HERALD_RETENTION_DELIVERIES_DAYS", 30, 1, 3650) * DAY_MS,
    auditMs: integer(env, "HERALD_RETENTION_AUDIT_DAYS", 365, 0, 36_500) * DAY_MS,
    analyticsSnapshotsMs: integer(env, "HERALD_RETENTION_ANALYTICS_DAYS", 400, 0, 36_500) * DAY_MS,
    batchSize: integer(env, "HERALD_RETENTION_BATCH_SIZE", 1000, 1, 100_000),
  };
}

/** HERALD_STRIPE_* and HERALD_BILLING_*; a processor mode without its keys and prices refuses to start. */
function billingConfig(env: Env, mode: Config["billingMode"]): BillingConfig {
  const config: BillingConfig = {
    stripeSecretKey: text(env, "HERALD_STRIPE_SECRET_KEY", null),
    stripeWebhookSecret: text(env, "HERALD_STRIPE_WEBHOOK_SECRET", null),
    priceMonthly: text(env, "HERALD_STRIPE_PRICE_MONTHLY", null),
    priceYearly: text(env, "HERALD_STRIPE_PRICE_YEARLY", null),
    stripeApiBase: (
      url(env, "HERALD_STRIPE_API_BASE", ["http:", "https:"]) ?? "https://api.stripe.com"
    ).replace(/\/+$/, ""),
    gracePeriodMs: integer(env, "HERALD_BILLING_GRACE_DAYS", 7, 0, 90) * DAY_MS,
    trialMs: integer(env, "HERALD_BILLING_TRIAL_DAYS", 14, 0, 730) * DAY_MS,
  };
  if (mode === "disabled") return config;
  const required: [string, string | null, RegExp, string][] = [
    [
      "HERALD_STRIPE_SECRET_KEY",
      config.stripeSecretKey,
      /^(sk|rk)_(test|live)_\S+$/,
      "sk_test_… or sk_live_…",
    ],
    ["HERALD_STRIPE_WEBHOOK_SECRET", config.stripeWebhookSecret, /^whsec_\S+$/, "whsec_…"],
    ["HERALD_STRIPE_PRICE_MONTHLY", config.priceMonthly, /^price_\S+$/, "price_…"],
    ["HERALD_STRIPE_PRICE_YEARLY", config.priceYearly, /^price_\S+$/, "price_…"],
  ];
  for (const [name, value, pattern, shape] of required) {
    if (value === null) throw new ConfigError(`${name} is required when HERALD_BILLING_MODE=${mode}`);
    if (!pattern.test(value)) throw new ConfigError(`${name} must look like ${shape}`);
  }
  // A test key in live mode (or the reverse) would bill nobody, or bill people during a test.
  const environment = mode === "processor_live" ? "live" : "test";
  if (!config.stripeSecretKey!.includes(`_${environment}_`))
    throw new ConfigError(
      `HERALD_STRIPE_SECRET_KEY must be a ${environment} key with HERALD_BILLING_MODE=${mode}`,
    );
  return config;
}

/** Reads and validates the HERALD_* variables; the only place that looks at the environment. */
export function loadConfig(env: Env = process.env): Config {
  const host = text(env, "HERALD_HOST", "127.0.0.1");
  const port = integer(env, "HERALD_PORT", 8080, 0, 65535);
  const baseUrlRaw = url(env, "HERALD_BASE_URL", ["http:", "https:"]);
  const baseUrl = (baseUrlRaw ?? `http://${host.includes(":") ? `[${host}]` : host}:${port}`).replace(
    /\/+$/,
    "",
  );
  const storage = oneOf(env, "HERALD_STORAGE", ["local", "s3"] as const, "local");
  const s3 = {
    endpoint: url(env, "HERALD_S3_ENDPOINT", ["http:", "https:"]),
    bucket: text(env, "HERALD_S3_BUCKET", null),
    accessKey: text(env, "HERALD_S3_ACCESS_KEY", null),
    secretKey: text(env, "HERALD_S3_SECRET_KEY", null),
    region: text(env, "HERALD_S3_REGION", "us-east-1"),
  };
  if (storage === "s3") {
    for (const [name, value] of [
      ["HERALD_S3_ENDPOINT", s3.endpoint],
      ["HERALD_S3_BUCKET", s3.bucket],
      ["HERALD_S3_ACCESS_KEY", s3.accessKey],
      ["HERALD_S3_SECRET_KEY", s3.secretKey],
    ] as const) {
      if (!value) throw new ConfigError(`${name} is required when HERALD_STORAGE=s3`);
    }
  }
  const secretKey = text(env, "HERALD_SECRET_KEY", null);
  if (secretKey !== null && secretKey.length < 32)
    throw new ConfigError("HERALD_SECRET_KEY must be at least 32 characters");
  const databaseUrl = url(env, "HERALD_DATABASE_URL", ["postgres:", "postgresql:"]);
  // Every process must open what another sealed, so a key file in one process's data dir won't do.
  if (databaseUrl !== null && secretKey === null)
    throw new ConfigError(
      "HERALD_SECRET_KEY is required with HERALD_DATABASE_URL (the same for every process)",
    );
  const allowPrivate = text(env, "HERALD_DEV_ALLOW_PRIVATE_NETWORK", "0");
  if (allowPrivate !== "0" && allowPrivate !== "1")
    throw new ConfigError(`HERALD_DEV_ALLOW_PRIVATE_NETWORK must be 0 or 1, got ${shown(allowPrivate)}`);
  const mailFrom = text(env, "HERALD_MAIL_FROM", "Herald <herald@localhost>");
  const confirmEmail = oneOf(env, "HERALD_SIGNUP_CONFIRM_EMAIL", ["auto", "on", "off"] as const, "auto");
  const trustedProxies = text(env, "HERALD_TRUSTED_PROXIES", "")
    .split(/[\s,]+/)
    .filter((entry) => entry !== "");
  try {
    parseCidrList(trustedProxies.join(","));
  } catch (error) {
    throw new ConfigError(`HERALD_TRUSTED_PROXIES: ${(error as Error).message} (use e.g. 10.0.0.0/8, ::1)`);
  }
  const accessLog = text(env, "HERALD_ACCESS_LOG", "1");
  if (accessLog !== "0" && accessLog !== "1") {
    throw new ConfigError(`HERALD_ACCESS_LOG must be 0 or 1, got ${shown(accessLog)}`);
  }
  const billingMode = oneOf(
    env,
    "HERALD_BILLING_MODE",
    ["disabled", "processor_test", "processor_live"] as const,
    "disabled",
  );
  return {
    host,
    port,
    baseUrl,
    dataDir: resolve(text(env, "HERALD_DATA_DIR", "./storage")),
    databaseUrl,
    databasePool: integer(env, "HERALD_DATABASE_POOL", 10, 1, 200),
    sqliteSync: oneOf(env, "HERALD_SQLITE_SYNC", ["full", "normal"] as const, "full"),
    storage,
    s3,
    secretKey,
    smtpUrl: url(env, "HERALD_SMTP_URL", ["smtp:", "smtps:"]),
    mailFrom,
    feedbackTo: text(env, "HERALD_FEEDBACK_TO", null),
    slackBotToken: text(env, "HERALD_SLACK_BOT_TOKEN", null),
    slackApiBase: (url(env, "HERALD_SLACK_API_BASE", ["http:", "https:"]) ?? "https://slack.com").replace(
      /\/+$/,
      "",
    ),
    billingMode,
    billing: billingConfig(env, billingMode),
    signup:
      text(env, "HERALD_SIGNUP", null) === null
        ? null
        : oneOf(env, "HERALD_SIGNUP", ["open", "closed"] as const, "open"),
    signupConfirmEmail: confirmEmail,
    signupRequestsPerHour: integer(env, "HERALD_SIGNUP_REQUESTS_PER_HOUR", 20, 1, 1_000_000),
    rateLimitPerMinute: integer(env, "HERALD_RATE_LIMIT_PER_MINUTE", 1200, 1, 1_000_000),
    authFailuresPerMinute: integer(env, "HERALD_AUTH_FAILURES_PER_MINUTE", 20, 1, 1_000_000),
    trustedProxies,
    accessLog: accessLog === "1",
    metricsToken: text(env, "HERALD_METRICS_TOKEN", null),
    devAllowPrivateNetwork: allowPrivate === "1",
    networks: networkSettings(env),
    engine: {
      missedToleranceMs: integer(env, "HERALD_MISSED_TOLERANCE_MINUTES", 30, 1, 10_080) * 60_000,
      minSpacingMs: integer(env, "HERALD_MIN_SPACING_SECONDS", 0, 0, 86_400) * 1000,
      dailyCapOverrides: dailyCapOverrides(env),
      monthlyPostLimitOverrides: monthlyPostLimitOverrides(env),
      providerTimeoutMs: integer(env, "HERALD_PROVIDER_TIMEOUT_SECONDS", 30, 1, 600) * 1000,
      concurrency: integer(env, "HERALD_PUBLISH_CONCURRENCY", 64, 1, 256),
      leaseMs: integer(env, "HERALD_LEASE_SECONDS", 60, 3, 3600) * 1000,
    },
    retention: retentionConfig(env),
  };
}

/** What the command-line client (`herald assets upload`, …) needs to reach a running Herald. */
export interface ClientConfig {
  /**
   * Origin of the server (HERALD_API_URL, else HERALD_BASE_URL, else http://127.0.0.1:8080); the API is
   * `<apiUrl>/v1`.
   */
  apiUrl: string;
  /** HERALD_API_KEY; null when unset (commands that call the API refuse to start). */
  apiKey: string | null;
  /** HERALD_WORKSPACE_ID; null means "the key's only workspace". */
  workspaceId: string | null;
}

/** Reads and validates the client's HERALD_* variables (the server's own settings are not needed). */
export function loadClientConfig(env: Env = process.env): ClientConfig {
  const apiUrl =
    url(env, "HERALD_API_URL", ["http:", "https:"]) ??
    url(env, "HERALD_BASE_URL", ["http:", "https:"]) ??
    "http://127.0.0.1:8080";
  const apiKey = text(env, "HERALD_API_KEY", null);
  if (apiKey !== null && !/^hk_(live|test)_[A-Za-z0-9]+$/.test(apiKey))
    throw new ConfigError("HERALD_API_KEY must be an API key like hk_live_…");
  const workspaceId = text(env, "HERALD_WORKSPACE_ID", null);
  if (workspaceId !== null && !/^ws_[a-z0-9]+$/.test(workspaceId))
    throw new ConfigError(`HERALD_WORKSPACE_ID must be a workspace id like ws_…, got ${shown(workspaceId)}`);
  return { apiUrl: apiUrl.replace(/\/+$/, "").replace(/\/v1$/, ""), apiKey, workspaceId };
}
