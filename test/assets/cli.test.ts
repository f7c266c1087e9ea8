// `herald assets upload FILE` against a running server: the real CLI as a process (plain progress
// lines when not on a terminal, --json output, retries over a flaky network, one-line errors), and
// the progress bar as a terminal sees it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runAssets } from "../../src/cli/assets.ts";
import { ConfigError, loadClientConfig } from "../../src/config.ts";
import { herald as runCli } from "../cli/helpers.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { ok } from "./helpers.ts";
import { mp4, png } from "./samples.ts";

const MiB = 1024 * 1024;

let s: TestServer;
let dir: string;
beforeAll(async () => {
  s = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), "herald-cli-assets-"));
});
afterAll(async () => {
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The CLI as a process in the test's directory; against the test server with its owner's key by default. */
function herald(
  args: string[],
  extra: Record<string, string> = { HERALD_API_URL: s.url, HERALD_API_KEY: s.owner.apiKey },
) {
  return runCli(args, extra, { cwd: dir });
}

function file(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

describe("herald assets upload", () => {
  test("uploads a three-part PNG and prints the ready asset as JSON, with plain progress lines", async () => {
    const path = file("banner.png", png(1500, 500, 12 * MiB));
    const r = await herald(["assets", "upload", path, "--json"]);
    expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
    const asset = JSON.parse(r.stdout);
    expect(asset).toMatchObject({
      object: "asset",
      status: "ready",
      label: "banner.png",
      type: "card",
      content_type: "image/png",
      byte_size: 12 * MiB,
      dimensions: "1500x500",
      format: "x-landscape",
    });
    expect(r.stderr).toContain("computing checksums of banner.png");
    expect(r.stderr).toContain("uploaded 3/3 parts");
    expect(r.stderr).not.toContain("\r");
    expect(
      ok(await s.request("GET", `/v1/workspaces/${s.owner.workspaceId}/assets/${asset.id}`)).body.status,
    ).toBe("ready");
  });

  test("a video gets kind video from its type, and a one-line summary without --json", async () => {
    const path = file("clip.mov", mp4(720, 1280, 9, { brand: "qt  " }));
    const r = await herald(["assets", "upload", path]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(
      /^ast_[0-9a-z]+ ready: clip\.mov \(video\/quicktime, 720x1280, vertical, 9 s, \d+ B, crc64nvme [A-Za-z0-9+/]{11}=\)$/,
    );
  });

  test("parts that fail on the way are sent again", async () => {
    const path = file("flaky.png", png(64, 64, 11 * MiB));
    // A front that answers 503 to the first try of every part, then lets the parts through.
    const seen = new Set<string>();
    const front = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const url = new URL(request.url);
        if (request.method === "PUT" && !seen.has(url.pathname)) {
          seen.add(url.pathname);
          await request.arrayBuffer();
          return new Response("busy", { status: 503 });
        }
        return fetch(s.url + url.pathname + url.search, {
          method: request.method,
          headers: request.headers,
          body: request.body,
          duplex: "half",
        } as RequestInit);
      },
    });
    const original = s.herald.config.baseUrl;
    s.herald.config.baseUrl = `http://127.0.0.1:${front.port}`;
    try {
      const r = await herald(["assets", "upload", path, "--json"]);
      expect({ code: r.code, stderr: r.code === 0 ? "" : r.stderr }).toEqual({ code: 0, stderr: "" });
      expect(JSON.parse(r.stdout).status).toBe("ready");
      expect(seen.size).toBe(3);
    } finally {
      s.herald.config.baseUrl = original;
      await front.stop(true);
    }
  });

  const failures: {
    name: string;
    args: () => string[];
    env?: () => Record<string, string> | Promise<Record<string, string>>;
    code: number;
    message: RegExp;
  }[] = [
    {
      name: "no API key",
      args: () => ["assets", "upload", file("a.png", png(2, 2))],
      env: () => ({ HERALD_API_URL: s.url }),
      code: 1,
      message: /HERALD_API_KEY is required/,
    },
    {
      name: "a key without assets:write",
      args: () => ["assets", "upload", file("b.png", png(2, 2))],
      env: async () => ({
        HERALD_API_URL: s.url,
        HERALD_API_KEY: await s.createKey({ scopes: ["workspaces:read"] }),
      }),
      code: 1,
      message: /assets:write/,
    },
    {
      name: "a missing file",
      args: () => ["assets", "upload", join(dir, "nope.png")],
      code: 2,
      message: /is not a readable file/,
    },
    {
      name: "an unknown file type",
      args: () => ["assets", "upload", file("notes.txt", new TextEncoder().encode("hi"))],
      code: 2,
      message: /--content-type/,
    },
    {
      name: "a file that is not what its name says",
      args: () => ["assets", "upload", file("fake.png", new TextEncoder().encode("not a png at all"))],
      code: 1,
      message: /not a PNG, JPEG, GIF or WebP/,
    },
    {
      name: "an unknown kind",
      args: () => ["assets", "upload", file("c.png", png(2, 2)), "--kind", "banner"],
      code: 2,
      message: /--kind must be/,
    },
    {
      name: "a server that is not there",
      args: () => ["assets", "upload", file("d.png", png(2, 2)), "--workspace", s.owner.workspaceId],
      env: () => ({ HERALD_API_URL: "http://127.0.0.1:9", HERALD_API_KEY: s.owner.apiKey }),
      code: 3,
      message: /cannot reach Herald/,
    },
  ];
  for (const c of failures) {
    test(`${c.name}: exit ${c.code} with one line`, async () => {
      const r = await herald(
        c.args(),
        (await c.env?.()) ?? { HERALD_API_URL: s.url, HERALD_API_KEY: s.owner.apiKey },
      );
      expect(r.code).toBe(c.code);
      const lines = r.stderr
        .trim()
        .split("\n")
        .filter((l) => !l.startsWith("computing checksums") && !l.startsWith("uploaded "));
      expect(lines.length).toBe(1);
      expect(lines[0]).toMatch(c.message);
      expect(r.stdout).toBe("");
    }, 60_000);
  }

  test("herald help assets and herald assets --help explain the command", async () => {
    for (const args of [
      ["help", "assets"],
      ["assets", "--help"],
    ]) {
      const r = await herald(args, {});
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("Usage: herald assets upload FILE");
    }
    expect((await herald(["help"], {})).stdout).toContain("assets upload");
  });
});

describe("the progress bar on a terminal", () => {
  test("redraws one line with percentage, throughput and parts, and ends it", async () => {
    const path = file("tty.png", png(10, 10, 16 * MiB));
    const writes: string[] = [];
    const saved = { url: process.env.HERALD_API_URL, key: process.env.HERALD_API_KEY };
    process.env.HERALD_API_URL = s.url;
    process.env.HERALD_API_KEY = s.owner.apiKey;
    try {
      const out = await runAssets(["upload", path, "--workspace", s.owner.workspaceId, "--json"], {
        write: (t) => void writes.push(t),
        isTTY: true,
      });
      expect(JSON.parse(out).status).toBe("ready");
    } finally {
      for (const [name, value] of [
        ["HERALD_API_URL", saved.url],
        ["HERALD_API_KEY", saved.key],
      ] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
    const last = writes.at(-1)!;
    expect(last).toStartWith("\r\x1b[2KUploading [##############################] 100%");
    expect(last).toMatch(/16\.0 MiB of 16\.0 MiB  [\d.]+ MiB\/s  4\/4 parts\n$/);
    expect(writes.every((w) => w.startsWith("\r"))).toBe(true);
  });
});

describe("the client's settings", () => {
  const cases: { name: string; env: Record<string, string>; expected: Record<string, unknown> | RegExp }[] = [
    {
      name: "nothing set",
      env: {},
      expected: { apiUrl: "http://127.0.0.1:8080", apiKey: null, workspaceId: null },
    },
    {
      name: "HERALD_API_URL with /v1 and a slash",
      env: { HERALD_API_URL: "https://herald.example.com/v1/" },
      expected: { apiUrl: "https://herald.example.com" },
    },
    {
      name: "HERALD_BASE_URL when HERALD_API_URL is unset",
      env: { HERALD_BASE_URL: "https://pub.example.com" },
      expected: { apiUrl: "https://pub.example.com" },
    },
    {
      name: "a key and a workspace",
      env: { HERALD_API_KEY: "hk_test_abc123", HERALD_WORKSPACE_ID: "ws_01abc" },
      expected: { apiKey: "hk_test_abc123", workspaceId: "ws_01abc" },
    },
    {
      name: "a key that is not one",
      env: { HERALD_API_KEY: "Bearer hk_live_x" },
      expected: /HERALD_API_KEY must be an API key/,
    },
    {
      name: "a workspace id that is not one",
      env: { HERALD_WORKSPACE_ID: "default" },
      expected: /HERALD_WORKSPACE_ID must be a workspace id/,
    },
    {
      name: "an API URL that is not http",
      env: { HERALD_API_URL: "ftp://x" },
      expected: /HERALD_API_URL must use http: or https:/,
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      if (c.expected instanceof RegExp) {
        expect(() => loadClientConfig(c.env)).toThrow(ConfigError);
        expect(() => loadClientConfig(c.env)).toThrow(c.expected);
      } else {
        expect(loadClientConfig(c.env)).toMatchObject(c.expected);
      }
    });
  }
});
