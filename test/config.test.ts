import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ConfigError, loadConfig } from "../src/config.ts";
import { openHerald } from "../src/server.ts";
import type { Herald } from "../src/herald.ts";
import { emailConfirmationRequired } from "../src/modules/signup/confirmation.ts";

/** The ConfigError `loadConfig(env)` throws (fails the test when it does not throw one). */
function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return error as ConfigError;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

const S3_ENV = {
  HERALD_STORAGE: "s3",
  HERALD_S3_ENDPOINT: "http://127.0.0.1:9000",
  HERALD_S3_BUCKET: "herald",
  HERALD_S3_ACCESS_KEY: "access",
  HERALD_S3_SECRET_KEY: "s3-secret-value",
};

describe("defaults", () => {
  test("an empty environment gives a working local setup", () => {
    const c = loadConfig({});
    expect(c.host).toBe("127.0.0.1");
    expect(c.port).toBe(8080);
    expect(c.baseUrl).toBe("http://127.0.0.1:8080");
    expect(c.dataDir).toBe(resolve("./storage"));
    expect(c.dataDir.startsWith("/")).toBe(true);
    expect(c.storage).toBe("local");
    expect(c.s3).toEqual({
      endpoint: null,
      bucket: null,
      accessKey: null,
      secretKey: null,
      region: "us-east-1",
    });
    expect(c.secretKey).toBeNull();
    expect(c.smtpUrl).toBeNull();
    expect(c.mailFrom).toBe("Herald <herald@localhost>");
    expect(c.feedbackTo).toBeNull();
    expect(c.slackBotToken).toBeNull();
    expect(c.billingMode).toBe("disabled");
    // Unset: the installation's own setting decides (open until an owner chooses).
    expect(c.signup).toBeNull();
    expect(c.rateLimitPerMinute).toBe(1200);
    expect(c.authFailuresPerMinute).toBe(20);
    expect(c.accessLog).toBe(true);
    expect(c.devAllowPrivateNetwork).toBe(false);
  });

  test("an empty value counts as unset", () => {
    const c = loadConfig({
      HERALD_PORT: "",
      HERALD_HOST: "",
      HERALD_STORAGE: "",
      HERALD_SMTP_URL: "",
      HERALD_BASE_URL: "",
    });
    expect(c.port).toBe(8080);
    expect(c.host).toBe("127.0.0.1");
    expect(c.storage).toBe("local");
    expect(c.smtpUrl).toBeNull();
    expect(c.baseUrl).toBe("http://127.0.0.1:8080");
  });

  test("loadConfig() reads process.env", () => {
    // The PostgreSQL pass sets HERALD_DATABASE_URL, which needs a secret key alongside.
    const set = { HERALD_PORT: "8181", HERALD_SECRET_KEY: "k".repeat(32) };
    const saved = Object.fromEntries(Object.keys(set).map((name) => [name, process.env[name]]));
    Object.assign(process.env, set);
    try {
      expect(loadConfig().port).toBe(8181);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

describe("values that are read", () => {
  test("host and port make the base URL; an IPv6 host is bracketed", () => {
    expect(loadConfig({ HERALD_HOST: "0.0.0.0", HERALD_PORT: "9000" }).baseUrl).toBe("http://0.0.0.0:9000");
    expect(loadConfig({ HERALD_HOST: "::1", HERALD_PORT: "9000" }).baseUrl).toBe("http://[::1]:9000");
  });

  test("HERALD_BASE_URL wins over host and port, without trailing slashes", () => {
    const c = loadConfig({ HERALD_BASE_URL: "https://herald.example.com/", HERALD_PORT: "9000" });
    expect(c.baseUrl).toBe("https://herald.example.com");
    expect(c.port).toBe(9000);
  });

  test("port boundaries 0 and 65535 are accepted", () => {
    expect(loadConfig({ HERALD_PORT: "0" }).port).toBe(0);
    expect(loadConfig({ HERALD_PORT: "65535" }).port).toBe(65535);
  });

  test("HERALD_DATA_DIR is resolved to an absolute path", () => {
    expect(loadConfig({ HERALD_DATA_DIR: "data/here" }).dataDir).toBe(resolve("data/here"));
    expect(loadConfig({ HERALD_DATA_DIR: "/var/lib/herald" }).dataDir).toBe("/var/lib/herald");
  });

  test("s3 storage with every variable set", () => {
    const c = loadConfig({ ...S3_ENV, HERALD_S3_REGION: "eu-west-1" });
    expect(c.storage).toBe("s3");
    expect(c.s3).toEqual({
      endpoint: "http://127.0.0.1:9000",
      bucket: "herald",
      accessKey: "access",
      secretKey: "s3-secret-value",
      region: "eu-west-1",
    });
  });

  test("smtp and smtps URLs, secret key, switches and modes", () => {
    expect(loadConfig({ HERALD_SMTP_URL: "smtp://u:p@127.0.0.1:2525" }).smtpUrl).toBe(
      "smtp://u:p@127.0.0.1:2525",
    );
    expect(loadConfig({ HERALD_SMTP_URL: "smtps://mail.example.com" }).smtpUrl).toBe(
      "smtps://mail.example.com",
    );
    expect(loadConfig({ HERALD_SECRET_KEY: "k".repeat(32) }).secretKey).toBe("k".repeat(32));
    expect(loadConfig({ HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" }).devAllowPrivateNetwork).toBe(true);
    expect(loadConfig({ HERALD_DEV_ALLOW_PRIVATE_NETWORK: "0" }).devAllowPrivateNetwork).toBe(false);
    const stripe = {
      HERALD_STRIPE_SECRET_KEY: "sk_test_abc",
      HERALD_STRIPE_WEBHOOK_SECRET: "whsec_abc",
      HERALD_STRIPE_PRICE_MONTHLY: "price_month",
      HERALD_STRIPE_PRICE_YEARLY: "price_year",
    };
    expect(
      loadConfig({ HERALD_BILLING_MODE: "processor_test", HERALD_SIGNUP: "closed", ...stripe }),
    ).toMatchObject({
      billingMode: "processor_test",
      signup: "closed",
    });
    expect(loadConfig({ HERALD_RATE_LIMIT_PER_MINUTE: "5" }).rateLimitPerMinute).toBe(5);
    expect(loadConfig({ HERALD_AUTH_FAILURES_PER_MINUTE: "7" }).authFailuresPerMinute).toBe(7);
    expect(loadConfig({ HERALD_ACCESS_LOG: "0" }).accessLog).toBe(false);
    // SQLite commits are synced before they are acknowledged unless the operator opts out.
    expect(loadConfig({}).sqliteSync).toBe("full");
    expect(loadConfig({ HERALD_SQLITE_SYNC: "normal" }).sqliteSync).toBe("normal");
  });
});

describe("a bad value is a one-line ConfigError naming the variable", () => {
  const cases: { env: Record<string, string>; names: string }[] = [
    { env: { HERALD_PORT: "70000" }, names: "HERALD_PORT" },
    { env: { HERALD_PORT: "65536" }, names: "HERALD_PORT" },
    { env: { HERALD_PORT: "abc" }, names: "HERALD_PORT" },
    { env: { HERALD_PORT: "-1" }, names: "HERALD_PORT" },
    { env: { HERALD_PORT: "80.5" }, names: "HERALD_PORT" },
    { env: { HERALD_PORT: "80\n81" }, names: "HERALD_PORT" },
    { env: { HERALD_STORAGE: "ftp" }, names: "HERALD_STORAGE" },
    { env: { HERALD_STORAGE: "S3" }, names: "HERALD_STORAGE" },
    { env: { ...S3_ENV, HERALD_S3_ENDPOINT: "" }, names: "HERALD_S3_ENDPOINT" },
    { env: { ...S3_ENV, HERALD_S3_BUCKET: "" }, names: "HERALD_S3_BUCKET" },
    { env: { ...S3_ENV, HERALD_S3_ACCESS_KEY: "" }, names: "HERALD_S3_ACCESS_KEY" },
    { env: { ...S3_ENV, HERALD_S3_SECRET_KEY: "" }, names: "HERALD_S3_SECRET_KEY" },
    { env: { HERALD_STORAGE: "s3" }, names: "HERALD_S3_ENDPOINT" },
    { env: { ...S3_ENV, HERALD_S3_ENDPOINT: "minio:9000" }, names: "HERALD_S3_ENDPOINT" },
    { env: { HERALD_BASE_URL: "not a url" }, names: "HERALD_BASE_URL" },
    { env: { HERALD_BASE_URL: "ftp://herald.example.com" }, names: "HERALD_BASE_URL" },
    { env: { HERALD_SECRET_KEY: "short" }, names: "HERALD_SECRET_KEY" },
    { env: { HERALD_SECRET_KEY: "k".repeat(31) }, names: "HERALD_SECRET_KEY" },
    { env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "yes" }, names: "HERALD_DEV_ALLOW_PRIVATE_NETWORK" },
    { env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "true" }, names: "HERALD_DEV_ALLOW_PRIVATE_NETWORK" },
    { env: { HERALD_ACCESS_LOG: "off" }, names: "HERALD_ACCESS_LOG" },
    { env: { HERALD_SQLITE_SYNC: "off" }, names: "HERALD_SQLITE_SYNC" },
    { env: { HERALD_AUTH_FAILURES_PER_MINUTE: "0" }, names: "HERALD_AUTH_FAILURES_PER_MINUTE" },
    { env: { HERALD_SMTP_URL: "http://x" }, names: "HERALD_SMTP_URL" },
    { env: { HERALD_SMTP_URL: "mail.example.com:25" }, names: "HERALD_SMTP_URL" },
    { env: { HERALD_BILLING_MODE: "live" }, names: "HERALD_BILLING_MODE" },
    { env: { HERALD_SIGNUP: "invite" }, names: "HERALD_SIGNUP" },
    { env: { HERALD_RATE_LIMIT_PER_MINUTE: "0" }, names: "HERALD_RATE_LIMIT_PER_MINUTE" },
  ];
  for (const c of cases) {
    test(`${JSON.stringify(c.env).slice(0, 90)}`, () => {
      const error = configError(c.env);
      expect(error.message).toContain(c.names);
      expect(error.message).not.toContain("\n");
      expect(error.message).not.toContain("\r");
      expect(error.message.length).toBeGreaterThan(c.names.length + 5);
      expect(error.message.length).toBeLessThan(300);
    });
  }

  test("the message says what is expected", () => {
    expect(configError({ HERALD_PORT: "70000" }).message).toContain("0 to 65535");
    expect(configError({ HERALD_STORAGE: "ftp" }).message).toMatch(/local.*s3/);
    expect(configError({ HERALD_SMTP_URL: "http://x" }).message).toMatch(/smtp:.*smtps:/);
    expect(configError({ HERALD_SECRET_KEY: "short" }).message).toContain("32");
    expect(configError({ HERALD_STORAGE: "s3" }).message).toContain("HERALD_STORAGE=s3");
  });
});

describe("secrets never reach a message", () => {
  const password = "Pa55-w0rd-secret";
  const secrets = [password, encodeURIComponent(password)];
  const cases: Record<string, string>[] = [
    { HERALD_SMTP_URL: `http://user:${password}@mail.example.com` },
    { HERALD_SMTP_URL: `smtp://user:${password}@mail.example.com:notaport` },
    { HERALD_SMTP_URL: `smtp://user:${password}@mail example.com` },
    // Unencoded `/` and `@` in a password make the URL unparsable; no part of it may show.
    { HERALD_SMTP_URL: `smtp://user:${password}/x@mail.example.com:25x` },
    { HERALD_SMTP_URL: `smtp://user:x/${password}@mail.example.com` },
    { HERALD_SMTP_URL: `smtp://user:x@${password}@mail example.com` },
    { HERALD_SMTP_URL: `user:${password}@mail.example.com` },
    { HERALD_S3_ENDPOINT: `http://key:${password}@minio:port` },
    { HERALD_BASE_URL: `https://admin:${password}@herald example.com` },
  ];
  for (const env of cases) {
    test(Object.values(env)[0]!.replace(password, "<password>"), () => {
      const error = configError(env);
      expect(error.message).toContain(Object.keys(env)[0]!);
      for (const secret of secrets) expect(error.message).not.toContain(secret);
      expect(error.message).not.toMatch(/Pa55|secret/);
      expect(error.message).not.toContain("\n");
    });
  }

  test("secret values of other variables are not echoed", () => {
    expect(configError({ HERALD_SECRET_KEY: "tiny-secret" }).message).not.toContain("tiny-secret");
    const s3 = configError({ ...S3_ENV, HERALD_S3_BUCKET: "" });
    expect(s3.message).not.toContain("s3-secret-value");
  });
});

describe("HERALD_SIGNUP_CONFIRM_EMAIL", () => {
  /** What emailConfirmationRequired answers for a setting, with or without a mail transport. */
  function required(setting: string | undefined, withMail: boolean): boolean {
    const config = loadConfig(setting === undefined ? {} : { HERALD_SIGNUP_CONFIRM_EMAIL: setting });
    const mail = withMail ? { send: async () => {} } : null;
    return emailConfirmationRequired({ config, mail } as unknown as Herald);
  }

  test("auto by default: on with a mail transport (HERALD_SMTP_URL), off without", () => {
    expect(loadConfig({}).signupConfirmEmail).toBe("auto");
    expect(required(undefined, false)).toBe(false);
    expect(required(undefined, true)).toBe(true);
    expect(required("auto", false)).toBe(false);
    expect(required("auto", true)).toBe(true);
  });

  test("on and off are what the operator says, mail or not", () => {
    expect(required("on", false)).toBe(true);
    expect(required("on", true)).toBe(true);
    expect(required("off", false)).toBe(false);
    expect(required("off", true)).toBe(false);
    const smtp = "smtp://mail.example:25";
    expect(loadConfig({ HERALD_SIGNUP_CONFIRM_EMAIL: "off", HERALD_SMTP_URL: smtp }).signupConfirmEmail).toBe(
      "off",
    );
  });

  test("any other value stops the start with a message naming the variable and the choices", () => {
    expect(configError({ HERALD_SIGNUP_CONFIRM_EMAIL: "yes" }).message).toBe(
      'HERALD_SIGNUP_CONFIRM_EMAIL must be one of auto, on, off, got "yes"',
    );
  });
});

describe("HERALD_<CH>_API_VERSION", () => {
  test("read for any network as given (trimmed); no variable, no value", () => {
    expect(loadConfig({ HERALD_LINKEDIN_API_VERSION: " 202609 " }).networks.linkedin).toMatchObject({
      apiVersion: "202609",
      clientId: null,
    });
    expect(loadConfig({ HERALD_LINKEDIN_CLIENT_ID: "id" }).networks.linkedin!.apiVersion).toBeNull();
  });

  test("a value the network refuses stops the start, naming the variable, before the database opens", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "herald-config-"));
    try {
      const config = loadConfig({ HERALD_DATA_DIR: dataDir, HERALD_LINKEDIN_API_VERSION: "2026-10" });
      const error = await openHerald(config).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toBe(
        'HERALD_LINKEDIN_API_VERSION must be a LinkedIn API version YYYYMM or YYYYMM.RR (like 202610), got "2026-10"',
      );
      expect(existsSync(join(dataDir, "herald.db"))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
