// The scenario of the log-secrets test: everything that creates a secret, done over HTTP (and the
// admin CLI) against a server, collecting every secret it sees. Works against a test server and
// against a `herald serve` process alike.
import { expect } from "bun:test";
import { uploadAsset } from "../assets/helpers.ts";
import { png } from "../assets/samples.ts";
import type { BlueskyFake } from "../fakes/bluesky.ts";
import type { MastodonFake } from "../fakes/mastodon.ts";
import type { TestServer } from "../helpers/server.ts";
import { TestBrowser, hiddenFields, pathOf } from "../helpers/browser.ts";
import { herald, remoteServer } from "./helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

/** What the scenario needs from the server it runs against. */
export interface Target {
  url: string;
  /** The admin CLI's environment (HERALD_DATA_DIR and the database). */
  adminEnv: Record<string, string>;
  /** Runs (or waits for) publishing, webhook deliveries and the mail outbox. */
  settle(): Promise<void>;
  /** Lets `ms` pass (a test server's clock moves; a process's wall clock is waited for). */
  wait(ms: number): Promise<void>;
  mastodon: MastodonFake;
  bluesky: BlueskyFake;
  /** A webhook receiver's URL. */
  receiverUrl: string;
}

export const PASSWORD = "Sëcret-passphrase-for-the-log-test-4711";

/** Runs the scenario; returns every secret it created or saw, by what it is. */
export async function runSecretsScenario(t: Target): Promise<Record<string, string>> {
  const secrets: Record<string, string> = { password: PASSWORD };
  const server = { url: t.url } as TestServer;
  const json = async (method: string, path: string, key: string | null, body?: unknown, extra = {}) => {
    const headers: Record<string, string> = { "content-type": "application/json", ...extra };
    if (key) headers.authorization = `Bearer ${key}`;
    const r = await fetch(t.url + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json().catch(() => null)) as any };
  };

  // Signup with a password through the page (signs the person in: a session cookie).
  const email = `secrets-${Date.now()}@example.com`;
  const intent = await json("POST", "/v1/signup-intents", null, { email, workspace_name: "Secrets" });
  expect(intent.status).toBe(201);
  secrets.signup_token = pathOf(intent.body.signup_url).split("/").pop()!;
  const browser = new TestBrowser(server);
  const signedUp = await browser.submit(pathOf(intent.body.signup_url), {
    name: "Secret Keeper",
    password: PASSWORD,
    password_confirmation: PASSWORD,
  });
  expect(signedUp.status).toBe(303);
  secrets.session = browser.cookies.get("herald_session")!;
  expect(secrets.session).toBeString();

  // An API key made in the dashboard, then one made by the admin CLI.
  const keysPage = await browser.get("/dashboard/keys");
  const pairs: [string, string][] = [
    ...Object.entries(hiddenFields(keysPage.text, "/dashboard/keys")),
    ["name", "From the dashboard"],
    ["environment", "live"],
    ["scopes", "workspaces:read"],
    ["workspace_access", "all"],
    ["expiry", "never"],
  ];
  const made = await browser.send("POST", "/dashboard/keys", pairs);
  expect(made.status).toBe(201);
  secrets.dashboard_key = /hk_live_[A-Za-z0-9]{40}/.exec(made.text)![0];
  const account = await json("GET", "/v1/account", secrets.dashboard_key);
  expect(account.status).toBe(200);
  const admin = await herald(
    ["admin", "create-key", "--account", account.body.id, "--name", "admin", "--json"],
    t.adminEnv,
  );
  expect({ code: admin.code, stderr: admin.stderr }).toEqual({ code: 0, stderr: "" });
  const key = (secrets.admin_key = JSON.parse(admin.stdout).api_key as string);
  const ws = (await json("GET", "/v1/workspaces", key)).body.data[0].id as string;

  // Provider connections: Mastodon through OAuth, Bluesky with an app password.
  const started = await json("POST", `/v1/workspaces/${ws}/destination-connections`, key, {
    provider: "mastodon",
    instance_origin: t.mastodon.origin,
  });
  expect(started.status).toBe(201);
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  const callback = await returnFromOAuth(authorize.headers.get("location")!);
  expect(callback.status).toBe(200);
  secrets.oauth_state = new URL(authorize.headers.get("location")!).searchParams.get("state")!;
  secrets.oauth_code = new URL(authorize.headers.get("location")!).searchParams.get("code")!;
  const mastodonId = (
    await json("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`, key)
  ).body.destination_id;
  const alice = t.bluesky.accounts.find((a) => a.handle === "alice.test")!;
  alice.password = secrets.bluesky_app_password = "bsky-app-pass-7f3k-9q2z";
  const bluesky = await json("POST", `/v1/workspaces/${ws}/destination-connections`, key, {
    provider: "bluesky",
    instance_origin: t.bluesky.origin,
    handle: "alice.test",
    app_password: secrets.bluesky_app_password,
  });
  expect(bluesky.status).toBe(201);

  // A webhook endpoint, its secret, and a rotation.
  const endpoint = await json(
    "POST",
    `/v1/workspaces/${ws}/webhook-endpoints`,
    key,
    { name: "Receiver", url: t.receiverUrl, event_types: ["post.published", "post.failed"] },
    { "idempotency-key": `secrets-endpoint-${Date.now()}` },
  );
  expect(endpoint.status).toBe(201);
  secrets.webhook_secret = endpoint.body.secret;
  const rotated = await json(
    "POST",
    `/v1/workspaces/${ws}/webhook-endpoints/${endpoint.body.id}/rotate-secret`,
    key,
    {},
  );
  expect(rotated.status).toBe(200);
  secrets.webhook_secret_rotated = rotated.body.secret;

  // A device authorization approved in the browser, exchanged for a key.
  const device = await json("POST", "/v1/cli-authorizations", null, {
    device_name: "laptop",
    cli_version: "1.0.0",
  });
  expect(device.status).toBe(201);
  secrets.device_secret = device.body.device_secret;
  secrets.user_code = new URL(device.body.verification_uri_complete).searchParams.get("user_code")!;
  const approved = await browser.submit(
    pathOf(device.body.verification_uri_complete),
    { decision: "approve" },
    "/device",
  );
  expect(approved.status).toBe(200);
  await t.wait(5_100); // the polling interval
  const exchanged = await json("POST", "/v1/cli-authorizations/token", null, {
    device_secret: secrets.device_secret,
  });
  expect(exchanged.status).toBe(200);
  secrets.device_key = exchanged.body.api_key;

  // An invitation (its token is in the link).
  const invited = await json(
    "POST",
    "/v1/account/invitations",
    key,
    { email: "friend@example.com" },
    {
      "idempotency-key": `secrets-invite-${Date.now()}`,
    },
  );
  expect(invited.status).toBe(201);
  // No mail is configured: the answer carries the link to pass on (the outbox keeps none).
  const link = /\/invitations\/([A-Za-z0-9]+)$/.exec(invited.body.invitation_url)?.[1];
  secrets.invitation_token = link!;
  expect((await fetch(`${t.url}/invitations/${link}`)).status).toBe(200);

  // Signed URLs: an upload's part URL and a download URL; a post with the media to both networks.
  const asset = await uploadAsset(
    remoteServer(() => t.url, key),
    ws,
    png(12, 9),
  );
  const download = await json("GET", `/v1/workspaces/${ws}/assets/${asset.id}?include=download`, key);
  secrets.download_signature = new URL(download.body.download_url).searchParams.get("signature")!;
  expect((await fetch(download.body.download_url)).status).toBe(200);
  const post = await json(
    "POST",
    `/v1/workspaces/${ws}/posts`,
    key,
    {
      when: "now",
      confirmed: true,
      group: `secrets-${Date.now()}`,
      posts: [
        { destination_id: mastodonId, body: ["With a picture"], media: [asset.id] },
        { destination_id: bluesky.body.destination_id, body: ["Hello"] },
      ],
    },
    { "idempotency-key": `secrets-post-${Date.now()}` },
  );
  expect(post.status).toBe(202);
  await t.settle();

  // The tokens Herald used at the networks, as the fakes saw them.
  const bearers = [...t.mastodon.requests, ...t.bluesky.requests]
    .map((r) => /^Bearer (.+)$/i.exec(r.headers.authorization ?? "")?.[1])
    .filter((v): v is string => !!v);
  expect(bearers.length).toBeGreaterThan(1);
  bearers.forEach((token, i) => (secrets[`provider_token_${i}`] = token));
  t.mastodon.apps.forEach((app, i) => (secrets[`mastodon_client_secret_${i}`] = app.clientSecret));
  return secrets;
}

/** Every (secret, line) pair where a log line contains a secret. */
export function leaks(lines: string[], secrets: Record<string, string>): { secret: string; line: string }[] {
  const found: { secret: string; line: string }[] = [];
  for (const line of lines)
    for (const [name, value] of Object.entries(secrets))
      if (value && value.length >= 8 && line.includes(value))
        found.push({ secret: name, line: line.slice(0, 300) });
  return found;
}
