// The command-line client against a real server (with a connected Mastodon fake): every command's
// table and --json output, the exit codes (1 API refusal with detail and request_id, 2 usage, 3 no
// server), confirmation before consequential actions, and text from arguments, a file or stdin.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { inTransaction } from "../../src/db/transaction.ts";
import { revokeApiKey } from "../../src/modules/keys/service.ts";
import { png } from "../assets/samples.ts";
import { BUN, MAIN, ROOT, cleanEnv } from "../helpers/process.ts";
import { startPostsWorld, type PostsWorld } from "../posts/helpers.ts";
import { mustCreateEndpoint } from "../webhooks/helpers.ts";
import {
  HAS_TERMINAL,
  cells,
  closedPort,
  failed,
  herald,
  heraldOnTerminal,
  removeTempDirs,
  succeeded,
  tempDir,
} from "./helpers.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

let w: PostsWorld;
let env: Record<string, string>;
let dir: string;
let destinationName: string;

beforeAll(async () => {
  w = await startPostsWorld();
  dir = tempDir();
  // An empty config dir: these runs use HERALD_API_KEY, never a stored login.
  env = { HERALD_API_URL: w.s.url, HERALD_API_KEY: w.s.owner.apiKey, HERALD_CONFIG_DIR: join(dir, "config") };
  const listed = await w.s.request("GET", `/v1/workspaces/${w.ws}/destinations`);
  destinationName = listed.body.data[0].display_name;
});
afterAll(async () => {
  await w.stop();
  removeTempDirs();
});

/** The posts of a group as the API lists them. */
async function groupPosts(group: string): Promise<any[]> {
  const r = await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?group=${group}`);
  expect(r.status).toBe(200);
  return r.body.data;
}

/** Creates a scheduled post through the API; returns it. */
async function scheduled(group: string, at = "2026-03-05T09:00:00Z"): Promise<any> {
  const r = await w.s.request("POST", `/v1/workspaces/${w.ws}/posts`, {
    body: {
      when: at,
      confirmed: true,
      group,
      posts: [{ destination_id: w.destinationId, body: ["API post"] }],
    },
    headers: { "idempotency-key": `cli-${group}` },
  });
  expect(r.status).toBe(201);
  return r.body.posts[0];
}

describe("whoami, workspaces list, destinations list", () => {
  test("whoami prints the server, account, key, its source and the workspace; --json the account", async () => {
    const out = succeeded(await herald(["whoami"], env));
    const rows = Object.fromEntries(cells(out).map(([label, value]) => [label, value]));
    expect(rows.server).toBe(w.s.url);
    expect(rows.account).toMatch(/^.+ \(acc_[0-9a-z]+\)$/);
    expect(rows.key).toMatch(/^bootstrap \(hk_live_[0-9A-Za-z]{4}…, live\)$/);
    expect(rows.from).toBe("HERALD_API_KEY");
    expect(rows.scopes).toContain("posts:write");
    expect(rows.workspace).toBe(`Test workspace (${w.ws})`);
    expect(rows.expires).toBe("never");
    const me = JSON.parse(succeeded(await herald(["whoami", "--json"], env)));
    expect(me).toMatchObject({
      object: "account",
      id: w.s.owner.accountId,
      authentication: { credential_id: w.s.owner.credentialId, environment: "live" },
    });
  });

  test("workspaces list: a table marking the default, or the listing as JSON", async () => {
    const table = cells(succeeded(await herald(["workspaces", "list"], env)));
    expect(table[0]).toEqual(["DEFAULT", "ID", "NAME", "TIME ZONE", "CREATED"]);
    expect(table.slice(1)).toEqual([["*", w.ws, "Test workspace", "UTC", "2026-03-01T12:00:00Z"]]);
    const listing = JSON.parse(succeeded(await herald(["workspaces", "list", "--json"], env)));
    expect(listing).toMatchObject({ has_more: false, next_cursor: null });
    expect(listing.data.map((x: any) => x.id)).toEqual([w.ws]);
  });

  test("destinations list: id, channel, name, status, default; --json the listing", async () => {
    const table = cells(succeeded(await herald(["destinations", "list"], env)));
    expect(table[0]).toEqual(["ID", "CHANNEL", "NAME", "STATUS", "DEFAULT"]);
    const listing = JSON.parse(succeeded(await herald(["destinations", "list", "--json"], env)));
    const d = listing.data[0];
    expect(d.id).toBe(w.destinationId);
    expect(table.slice(1)).toEqual([
      [d.id, "mastodon", d.display_name, "ready", d.is_default ? "yes" : "no"],
    ]);
  });
});

describe("posts create", () => {
  test("a scheduled thread from arguments, with --channel and --yes: the group and a table", async () => {
    const out = succeeded(
      await herald(
        [
          "posts",
          "create",
          "First item",
          "Second item",
          "--channel",
          "mastodon",
          "--when",
          "2026-03-02T09:00:00Z",
        ].concat(["--group", "cli-thread", "--yes"]),
        env,
      ),
    );
    const [group, header, row, ...rest] = cells(out);
    expect(group).toEqual(["group cli-thread"]);
    expect(header).toEqual(["ID", "CHANNEL", "DESTINATION", "STATE", "SCHEDULED", "PUBLISHED"]);
    expect(rest).toEqual([]);
    const [post] = await groupPosts("cli-thread");
    expect(row).toEqual([post.id, "mastodon", destinationName, "scheduled", "2026-03-02T09:00:00Z", "-"]);
    expect(post.payload.body).toEqual(["First item", "Second item"]);
    expect(post.destination_id).toBe(w.destinationId);
  });

  test("a draft from a file: --- separates the items; --json prints the post_set", async () => {
    const file = join(dir, "thread.txt");
    writeFileSync(file, "Opening line\nstill the first item\n---\nA reply\n---   \n\nThe end\n");
    const set = JSON.parse(
      succeeded(
        await herald(
          ["posts", "create", "--file", file, "--when", "draft", "--group", "cli-draft", "--json"],
          env,
        ),
      ),
    );
    expect(set).toMatchObject({ object: "post_set", group: "cli-draft" });
    expect(set.posts).toHaveLength(1);
    expect(set.posts[0]).toMatchObject({ state: "draft", destination_id: w.destinationId });
    expect(set.posts[0].payload.body).toEqual(["Opening line\nstill the first item", "A reply", "The end"]);
  });

  test("text from stdin (-) with --destination; the default group is a new cli-… value", async () => {
    const set = JSON.parse(
      succeeded(
        await herald(
          [
            "posts",
            "create",
            "-",
            "--destination",
            w.destinationId,
            "--when",
            "2026-03-03T09:00:00+01:00",
          ].concat(["--yes", "--json"]),
          env,
          { stdin: "Hello from stdin\n---\nand a reply\n" },
        ),
      ),
    );
    expect(set.group).toMatch(/^cli-\d{8}-\d{6}-[0-9a-f]{4}$/);
    expect(set.posts[0].payload.body).toEqual(["Hello from stdin", "and a reply"]);
    expect(set.posts[0].scheduled_at).toBe("2026-03-03T08:00:00.000Z");
  });

  test("--media uploads the file first (progress on stderr) and attaches the asset", async () => {
    const image = join(dir, "card.png");
    writeFileSync(image, png(40, 30));
    const r = await herald(
      ["posts", "create", "With a picture", "--media", image, "--when", "2026-03-04T09:00:00Z"].concat([
        "--group",
        "cli-media",
        "--yes",
        "--json",
      ]),
      env,
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("computing checksums of card.png");
    expect(r.stderr).toContain("uploaded 1/1 parts");
    const set = JSON.parse(r.stdout);
    const [assetId] = set.posts[0].asset_ids;
    expect(assetId).toMatch(/^ast_/);
    const asset = await w.s.request("GET", `/v1/workspaces/${w.ws}/assets/${assetId}`);
    expect(asset.body).toMatchObject({ status: "ready", label: "card.png", dimensions: "40x30" });
  });

  test("--when now publishes: 202 says the networks are still working; the post then shows its link", async () => {
    const out = succeeded(
      await herald(["posts", "create", "Published by the CLI", "--group", "cli-now", "--yes"], env),
    );
    const lines = out.trimEnd().split("\n");
    expect(lines.at(-1)).toBe(
      "Publishing continues on the networks; follow it with: herald posts list --group cli-now",
    );
    await w.s.server.engine.runUntilIdle();
    const [post] = await groupPosts("cli-now");
    expect(post.state).toBe("published");
    const shown = cells(succeeded(await herald(["posts", "get", post.id], env)));
    const field = (name: string) => shown.find((row) => row[0] === name)?.[1];
    expect(field("state")).toBe("published");
    expect(field("published")).toBe(post.published_at.replace(".000Z", "Z"));
    expect(shown).toContainEqual(["ITEM", "LINK"]);
    expect(shown).toContainEqual(["1", post.receipts[0].url]);
    expect(shown).toContainEqual(["1", "Published by the CLI"]);
    const json = JSON.parse(succeeded(await herald(["posts", "get", post.id, "--json"], env)));
    expect(json).toEqual(post);
  });

  test("publishing without --yes and without a terminal to ask is a usage error; nothing is sent", async () => {
    const r = await herald(["posts", "create", "Not confirmed", "--group", "cli-unconfirmed"], env);
    expect(failed(r, 2)).toContain("needs confirmation; pass --yes");
    expect(await groupPosts("cli-unconfirmed")).toEqual([]);
  });

  const terminal = HAS_TERMINAL ? test : test.skip;
  terminal(
    "at a terminal herald asks first: y sends confirmed: true, anything else sends nothing",
    async () => {
      const args = ["posts", "create", "Asked first", "--when", "2026-03-02T12:00:00Z", "--group"];
      const yes = await heraldOnTerminal([...args, "cli-asked-yes"], env, { prompt: "[y/N]", answer: "y\n" });
      expect(yes.screen).toContain(
        `Schedule the post for 2026-03-02T12:00:00Z on ${destinationName} (${w.destinationId})? [y/N]`,
      );
      expect(yes.code).toBe(0);
      expect((await groupPosts("cli-asked-yes")).map((p) => p.state)).toEqual(["scheduled"]);
      const no = await heraldOnTerminal([...args, "cli-asked-no"], env, { prompt: "[y/N]", answer: "n\n" });
      expect(no.code).toBe(1);
      expect(no.screen).toContain("herald: not confirmed; nothing was sent");
      expect(await groupPosts("cli-asked-no")).toEqual([]);
    },
    20_000,
  );

  test("--media also takes an existing asset id", async () => {
    const assets = await w.s.request("GET", `/v1/workspaces/${w.ws}/assets`);
    const assetId = assets.body.data[0].id;
    const set = JSON.parse(
      succeeded(
        await herald(["posts", "create", "Reused", "--media", assetId, "--when", "draft", "--json"], env),
      ),
    );
    expect(set.posts[0].asset_ids).toEqual([assetId]);
  });

  const usage: { name: string; args: string[]; message: string }[] = [
    { name: "no text", args: ["--when", "draft"], message: "give the post's text" },
    {
      name: "a --when that is not one",
      args: ["hi", "--when", "tomorrow"],
      message: "--when must be now, draft",
    },
    {
      name: "a time without an offset or a zone",
      args: ["hi", "--when", "2026-03-02T09:00:00"],
      message: "--when 2026-03-02T09:00:00 has no UTC offset: add one",
    },
    {
      name: "an unknown channel",
      args: ["hi", "--channel", "myspace", "--yes"],
      message: "--channel must be one of",
    },
    { name: "a bad group", args: ["hi", "--group", "no spaces", "--yes"], message: "--group must be" },
    {
      name: "an unknown option",
      args: ["hi", "--colour", "red"],
      message: "unknown option --colour for `herald posts create`; see `herald posts create --help`",
    },
    { name: "text and --file", args: ["hi", "--file", "x.txt"], message: "not both" },
    {
      name: "a missing file",
      args: ["--file", "/nonexistent/thread.txt"],
      message: "is not a readable file",
    },
    {
      name: "--time-zone with the queue",
      args: ["hi", "--when", "queue", "--time-zone", "UTC"],
      message: "--time-zone",
    },
  ];
  for (const c of usage)
    test(`usage error, exit 2: ${c.name}`, async () => {
      expect(failed(await herald(["posts", "create", ...c.args], env), 2)).toContain(c.message);
    });

  test("a channel without a destination: exit 1 (a draft may still name the bare channel)", async () => {
    const r = await herald(["posts", "create", "hi", "--channel", "bluesky", "--yes"], env);
    expect(failed(r, 1)).toContain("has no bluesky destination; connect one first");
    const set = JSON.parse(
      succeeded(
        await herald(["posts", "create", "hi", "--channel", "bluesky", "--when", "draft", "--json"], env),
      ),
    );
    expect(set.posts[0]).toMatchObject({ channel: "bluesky", destination_id: null, state: "draft" });
  });

  test("an API refusal exits 1 with the problem's detail, code and request_id", async () => {
    const args = [
      "posts",
      "create",
      "Draft",
      "--channel",
      "mastodon",
      "--when",
      "draft",
      "--group",
      "cli-twice",
    ];
    succeeded(await herald(args, env));
    const line = failed(await herald(args, env), 1);
    expect(line).toMatch(/^herald: .+ \[public_post_group_channel_conflict, request_id req_[0-9A-Za-z]+\]$/);
  });
});

describe("posts list, get, cancel, reschedule, retry, validate", () => {
  test("list: a table with text; filters; --limit pages with a hint; --all and --json", async () => {
    const table = cells(succeeded(await herald(["posts", "list", "--group", "cli-thread"], env)));
    const [post] = await groupPosts("cli-thread");
    expect(table).toEqual([
      ["ID", "GROUP", "CHANNEL", "STATE", "SCHEDULED", "PUBLISHED", "TEXT"],
      [post.id, "cli-thread", "mastodon", "scheduled", "2026-03-02T09:00:00Z", "-", "First item"],
    ]);
    const drafts = JSON.parse(succeeded(await herald(["posts", "list", "--view", "drafts", "--json"], env)));
    expect(drafts.data.length).toBeGreaterThan(0);
    expect(drafts.data.every((p: any) => p.state === "draft")).toBe(true);
    const page = succeeded(await herald(["posts", "list", "--limit", "1"], env));
    expect(page).toMatch(/\n\(more: herald posts list --after \S+, or --all\)\n$/);
    const everything = JSON.parse(
      succeeded(await herald(["posts", "list", "--all", "--limit", "2", "--json"], env)),
    );
    const api = await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?limit=100`);
    expect(everything.data.map((p: any) => p.id)).toEqual(api.body.data.map((p: any) => p.id));
    expect(everything.has_more).toBe(false);
    expect(failed(await herald(["posts", "list", "--limit", "500"], env), 2)).toContain("--limit must be");
  });

  test("get: an unknown post exits 1 with the 404's detail; a missing ID exits 2", async () => {
    expect(failed(await herald(["posts", "get", "send_nope"], env), 1)).toMatch(
      /\[public_not_found, request_id req_/,
    );
    expect(failed(await herald(["posts", "get"], env), 2)).toContain("missing argument");
  });

  test("cancel: asks (no terminal: exit 2), --yes cancels, a second cancel is the API's 409", async () => {
    const post = await scheduled("cli-cancel");
    expect(failed(await herald(["posts", "cancel", post.id], env), 2)).toContain("needs confirmation");
    expect((await w.s.request("GET", `/v1/workspaces/${w.ws}/posts/${post.id}`)).body.state).toBe(
      "scheduled",
    );
    expect(succeeded(await herald(["posts", "cancel", post.id, "--yes"], env)).trim()).toBe(
      `${post.id} cancelled`,
    );
    expect((await w.s.request("GET", `/v1/workspaces/${w.ws}/posts/${post.id}`)).body.state).toBe(
      "cancelled",
    );
    expect(failed(await herald(["posts", "cancel", post.id, "--yes"], env), 1)).toContain("request_id req_");
  });

  test("reschedule: the new time, or --json the post; a TIME without an offset exits 2", async () => {
    const post = await scheduled("cli-move");
    const out = succeeded(await herald(["posts", "reschedule", post.id, "2026-03-06T10:30:00Z", "-y"], env));
    expect(out.trim()).toBe(`${post.id} scheduled for 2026-03-06T10:30:00Z`);
    const json = JSON.parse(
      succeeded(
        await herald(["posts", "reschedule", post.id, "2026-03-06T11:00:00+01:00", "--yes", "--json"], env),
      ),
    );
    expect(json).toMatchObject({ id: post.id, scheduled_at: "2026-03-06T10:00:00.000Z" });
    expect(
      failed(await herald(["posts", "reschedule", post.id, "2026-03-06 10:30", "--yes"], env), 2),
    ).toContain("TIME must be");
  });

  test("retry: a failed post is sent again", async () => {
    w.mastodon.failNext(1, { status: 422, path: "/api/v1/statuses", body: { error: "Validation failed" } });
    succeeded(await herald(["posts", "create", "Fails once", "--group", "cli-retry", "--yes"], env));
    await w.s.server.engine.runUntilIdle();
    const [post] = await groupPosts("cli-retry");
    expect(post.state).toBe("failed");
    const json = JSON.parse(succeeded(await herald(["posts", "retry", post.id, "--yes", "--json"], env)));
    expect(json.id).toBe(post.id);
    expect(json.state).not.toBe("failed");
    await w.s.server.engine.runUntilIdle();
    expect((await groupPosts("cli-retry"))[0].state).toBe("published");
  });

  test("validate: valid exits 0; problems print as a table and exit 1; nothing is stored", async () => {
    const before = (await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?limit=100`)).body.data.length;
    const ok = succeeded(await herald(["posts", "validate", "Short and fine", "--channel", "mastodon"], env));
    expect(ok.trim()).toBe(`valid: ${destinationName} (${w.destinationId}) would accept the post`);
    const long = "x".repeat(600);
    const bad = await herald(["posts", "validate", long, "--channel", "mastodon"], env);
    expect(bad.code).toBe(1);
    const table = cells(bad.stdout);
    expect(table[0]).toEqual(["not valid:"]);
    expect(table[1]).toEqual(["POINTER", "CHANNEL", "CODE", "DETAIL"]);
    expect(table[2]!.slice(0, 2)).toEqual(["/posts/0/body/0", "mastodon"]);
    const json = await herald(["posts", "validate", long, "--channel", "mastodon", "--json"], env);
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ object: "post_validation", valid: false });
    expect(failed(await herald(["posts", "validate", "x", "--media", "card.png"], env), 2)).toContain(
      "--media takes asset ids",
    );
    const after = (await w.s.request("GET", `/v1/workspaces/${w.ws}/posts?limit=100`)).body.data.length;
    expect(after).toBe(before);
  });
});

const validateFirstComment =
  "posts validate --first-comment: the comment goes in the post's own options " +
  "(Mastodon takes no options: refused at its pointer)";
test(validateFirstComment, async () => {
  const r = await herald(
    ["posts", "validate", "Short", "--channel", "mastodon", "--first-comment", "Hi"],
    env,
  );
  expect(r.code).not.toBe(0);
  expect(r.stdout + r.stderr).toContain("/posts/0/destination_options/mastodon is not a known property");
  expect(failed(await herald(["posts", "validate", "x", "--first-comment", " "], env), 2)).toContain(
    "--first-comment needs the comment's text",
  );
});

describe("assets list, webhooks list and test", () => {
  test("assets list: the uploaded asset in a table; --json the listing", async () => {
    const listing = JSON.parse(succeeded(await herald(["assets", "list", "--json"], env)));
    const asset = listing.data.find((a: any) => a.label === "card.png");
    expect(asset).toBeDefined();
    const table = cells(succeeded(await herald(["assets", "list"], env)));
    expect(table[0]).toEqual([
      "ID",
      "TYPE",
      "STATUS",
      "LABEL",
      "CONTENT TYPE",
      "SIZE",
      "DIMENSIONS",
      "CREATED",
    ]);
    expect(table).toContainEqual([
      asset.id,
      "card",
      "ready",
      "card.png",
      "image/png",
      expect.stringMatching(/^\d+(\.\d)? (B|KiB)$/),
      "40x30",
      "2026-03-01T12:00:00Z",
    ]);
  });

  test("webhooks list and test: the endpoint in a table; test queues a webhook.test delivery", async () => {
    expect(succeeded(await herald(["webhooks", "list"], env)).trim()).toBe("No webhook endpoints.");
    const endpoint = await mustCreateEndpoint(w.s, {
      url: "http://127.0.0.1:9/hook",
      event_types: ["post.failed"],
    });
    const table = cells(succeeded(await herald(["webhooks", "list"], env)));
    expect(table).toEqual([
      ["ID", "NAME", "URL", "ENABLED", "EVENTS"],
      [endpoint.id, "Receiver", "http://127.0.0.1:9/hook", "yes", "post.failed"],
    ]);
    const listing = JSON.parse(succeeded(await herald(["webhooks", "list", "--json"], env)));
    expect(listing.data[0]).not.toHaveProperty("secret");
    const line = succeeded(await herald(["webhooks", "test", endpoint.id], env)).trim();
    expect(line).toMatch(new RegExp(`^\\S+ pending: webhook.test event evt_\\S+ to ${endpoint.id}$`));
    const delivery = JSON.parse(succeeded(await herald(["webhooks", "test", endpoint.id, "--json"], env)));
    expect(delivery).toMatchObject({
      object: "webhook_delivery",
      endpoint_id: endpoint.id,
      event_type: "webhook.test",
    });
    expect(failed(await herald(["webhooks", "test", "wh_nope"], env), 1)).toContain("public_not_found");
  });
});

describe("exit codes", () => {
  test("3 when nothing listens at the server's address, for every kind of command", async () => {
    const port = await closedPort();
    const away = { ...env, HERALD_API_URL: `http://127.0.0.1:${port}`, HERALD_WORKSPACE_ID: w.ws };
    for (const args of [
      ["whoami"],
      ["posts", "list"],
      ["posts", "create", "hi", "--destination", w.destinationId, "--yes"],
      ["posts", "cancel", "send_x", "--yes"],
      ["webhooks", "test", "wh_x"],
      ["assets", "list"],
    ]) {
      const line = failed(await herald(args, away), 3);
      expect(line).toContain(`cannot reach Herald at http://127.0.0.1:${port}`);
    }
  }, 30_000);

  test("1 for a key the server refuses (401) and for a key without the scope (403)", async () => {
    const revoked = await w.s.createKey({});
    const me = await w.s.request("GET", "/v1/me", { key: revoked });
    expect(me.status).toBe(200);
    await inTransaction(w.s.herald.db, (tx) =>
      revokeApiKey(tx, me.body.authentication.credential_id, w.s.clock.now()),
    );
    expect(failed(await herald(["whoami"], { ...env, HERALD_API_KEY: revoked }), 1)).toContain(
      "request_id req_",
    );
    const reader = await w.s.createKey({ scopes: ["workspaces:read"] });
    expect(failed(await herald(["posts", "list"], { ...env, HERALD_API_KEY: reader }), 1)).toContain(
      "posts:read",
    );
  });

  test("2 for unknown commands and options of every command group", async () => {
    for (const args of [
      ["posts", "publish"],
      ["posts", "list", "--colour"],
      ["workspaces", "create"],
      ["destinations", "list", "extra"],
      ["webhooks", "delete"],
      ["webhooks", "test"],
      ["assets", "list", "--nope"],
      ["whoami", "--nope"],
      ["login", "--nope"],
      ["logout", "now"],
    ])
      expect(await herald(args, env)).toMatchObject({ code: 2, stdout: "" });
  });
});

describe("help", () => {
  test("every command and posts subcommand has its own help, exit 0", async () => {
    const cases: [string[], string][] = [
      [["login", "--help"], "Usage: herald login"],
      [["logout", "-h"], "Usage: herald logout"],
      [["whoami", "--help"], "Usage: herald whoami"],
      [["workspaces", "--help"], "Usage: herald workspaces list"],
      [["destinations", "list", "--help"], "Usage: herald destinations list"],
      [["webhooks", "test", "--help"], "Usage: herald webhooks list"],
      [["posts", "--help"], "Usage: herald posts <command>"],
      [["posts", "create", "--help"], "Usage: herald posts create"],
      [["help", "posts", "reschedule"], "Usage: herald posts reschedule"],
      [["posts", "validate", "-h"], "Usage: herald posts validate"],
      [["assets", "list", "--help"], "herald assets list"],
      [["help", "login"], "Usage: herald login"],
    ];
    for (const [args, usage] of cases) {
      const r = await herald(args, {});
      expect({ args, code: r.code, stderr: r.stderr }).toEqual({ args, code: 0, stderr: "" });
      expect(r.stdout).toContain(usage);
    }
  });
});

describe("credentials: stored login, environment overrides", () => {
  /** A config dir holding a login for this server with `key`. */
  function loginDir(key: string, baseUrl = w.s.url): string {
    const config = tempDir();
    const login = { base_url: baseUrl, api_key: key, workspace_id: w.ws, account_id: w.s.owner.accountId };
    writeFileSync(join(config, "credentials.json"), JSON.stringify(login), { mode: 0o600 });
    return config;
  }

  test("the stored login is used without HERALD_API_KEY (its server and workspace)", async () => {
    const config = loginDir(w.s.owner.apiKey);
    const out = succeeded(await herald(["whoami"], { HERALD_CONFIG_DIR: config }));
    const rows = Object.fromEntries(cells(out).map(([label, value]) => [label, value]));
    expect(rows).toMatchObject({
      server: w.s.url,
      from: join(config, "credentials.json"),
      workspace: `Test workspace (${w.ws})`,
    });
  });

  test("XDG_CONFIG_HOME/herald is the default directory, else ~/.config/herald", async () => {
    const xdg = tempDir();
    const home = tempDir();
    const { mkdirSync, renameSync } = await import("node:fs");
    mkdirSync(join(xdg, "herald"));
    renameSync(join(loginDir(w.s.owner.apiKey), "credentials.json"), join(xdg, "herald", "credentials.json"));
    const viaXdg = succeeded(await herald(["whoami"], { XDG_CONFIG_HOME: xdg, HOME: home }));
    expect(viaXdg).toContain(join(xdg, "herald", "credentials.json"));
    mkdirSync(join(home, ".config", "herald"), { recursive: true });
    renameSync(join(xdg, "herald", "credentials.json"), join(home, ".config", "herald", "credentials.json"));
    const viaHome = succeeded(await herald(["whoami"], { XDG_CONFIG_HOME: "", HOME: home }));
    expect(viaHome).toContain(join(home, ".config", "herald", "credentials.json"));
  });

  test("HERALD_API_KEY wins over the login; HERALD_API_URL overrides the login's server", async () => {
    const config = loginDir(w.s.owner.apiKey);
    const other = await w.s.createKey({ scopes: ["workspaces:read"] });
    const viaEnv = succeeded(
      await herald(["whoami", "--json"], {
        HERALD_CONFIG_DIR: config,
        HERALD_API_KEY: other,
        HERALD_API_URL: w.s.url,
      }),
    );
    expect(JSON.parse(viaEnv).authentication.scopes).toEqual(["workspaces:read"]);
    const port = await closedPort();
    const moved = await herald(["whoami"], {
      HERALD_CONFIG_DIR: config,
      HERALD_API_URL: `http://127.0.0.1:${port}`,
    });
    expect(failed(moved, 3)).toContain(`127.0.0.1:${port}`);
  });

  test("no login and no key: exit 1 saying to log in; a damaged login file: exit 1 naming it", async () => {
    expect(failed(await herald(["posts", "list"], { HERALD_CONFIG_DIR: tempDir() }), 1)).toContain(
      'not logged in: run "herald login" first',
    );
    const config = tempDir();
    writeFileSync(join(config, "credentials.json"), "{not json");
    expect(failed(await herald(["whoami"], { HERALD_CONFIG_DIR: config }), 1)).toContain(
      `${join(config, "credentials.json")} is not a Herald login`,
    );
  });

  test("with two workspaces and no default, a workspace command asks for --workspace (exit 2)", async () => {
    const second = await w.s.request("POST", "/v1/workspaces", { body: { name: "Second" } });
    expect(second.status).toBe(201);
    const bare = { HERALD_API_URL: w.s.url, HERALD_API_KEY: w.s.owner.apiKey, HERALD_CONFIG_DIR: tempDir() };
    expect(failed(await herald(["destinations", "list"], bare), 2)).toContain("choose one with --workspace");
    const table = cells(succeeded(await herald(["workspaces", "list"], bare)));
    expect(table.slice(1).map((row) => row[0])).toEqual(["-", "-"]);
    const chosen = cells(
      succeeded(await herald(["workspaces", "list"], { ...bare, HERALD_WORKSPACE_ID: w.ws })),
    );
    expect(chosen.find((row) => row[1] === w.ws)?.[0]).toBe("*");
    const other = JSON.parse(
      succeeded(await herald(["destinations", "list", "--workspace", second.body.id, "--json"], bare)),
    );
    expect(other.data).toEqual([]);
  });
});

describe("herald destinations connect", () => {
  /** Starts the command and returns it with the authorization URL it printed on stderr. */
  async function startConnect(args: string[]) {
    const proc = Bun.spawn([BUN, MAIN, "destinations", "connect", ...args, "--workspace", w.ws], {
      cwd: ROOT,
      env: cleanEnv({ HERALD_NO_BROWSER: "1", ...env }),
      stdout: "pipe",
      stderr: "pipe",
    });
    const reader = proc.stderr.getReader();
    let text = "";
    let url: string | null = null;
    while (url === null) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`no authorization URL printed: ${text}`);
      text += new TextDecoder().decode(value);
      url = /https?:\/\/\S+\/oauth\/authorize\?\S+/.exec(text)?.[0] ?? null;
    }
    /** Everything the command writes on stderr, from the start to its end. */
    const stderr = async () => {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += new TextDecoder().decode(value);
      }
    };
    return { proc, url, stderr };
  }

  test("an OAuth network: the page is printed, the command waits for the return and names the destination", async () => {
    const { proc, url } = await startConnect(["mastodon", "--instance", w.mastodon.origin]);
    const consent = await fetch(url, { redirect: "manual" });
    expect((await returnFromOAuth(consent.headers.get("location")!)).status).toBe(200);
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    // Connecting the same account again keeps its destination.
    expect(stdout.trim()).toBe(
      `Connected mastodon: destination ${w.destinationId} (herald destinations list).`,
    );
  });

  test("an authorization the person refused ends with exit 1 and the reason", async () => {
    const { proc, url, stderr: output } = await startConnect(["mastodon", "--instance", w.mastodon.origin]);
    const state = new URL(url).searchParams.get("state")!;
    await fetch(`${w.s.url}/oauth/callback/mastodon?error=access_denied&state=${state}`);
    const [stderr, code] = await Promise.all([output(), proc.exited]);
    expect(code).toBe(1);
    expect(stderr).toContain("connecting mastodon failed: access_denied");
  });

  test("without a channel it is a usage error", async () => {
    failed(await herald(["destinations", "connect"], env), 2);
  });
});
