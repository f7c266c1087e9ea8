// Headers of the pages outside the dashboard and of downloads: the docs page and the OAuth return page
// carry a CSP fitting them and refuse framing; downloads and the docs bundle are never sniffed; the
// pages' cookies take the `__Host-` prefix (with Secure) when the base URL is https, plain names on http,
// and the reading side accepts only the name its base URL uses.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bootstrapAccount } from "../src/modules/account/bootstrap.ts";
import { uploadAsset } from "./assets/helpers.ts";
import { png } from "./assets/samples.ts";
import { TestBrowser } from "./helpers/browser.ts";
import { startTestServer, type TestServer } from "./helpers/server.ts";

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => {
  await s.stop();
});

/** The CSP of a response as directive → sources. */
function cspOf(response: Response): Record<string, string> {
  const policy = response.headers.get("content-security-policy") ?? "";
  return Object.fromEntries(
    policy
      .split(";")
      .map((d) => d.trim())
      .filter(Boolean)
      .map((d) => [d.split(" ")[0]!, d.split(" ").slice(1).join(" ")]),
  );
}

describe("pages outside the dashboard", () => {
  const pages: [string, string, Record<string, string>][] = [
    [
      "the API docs page",
      "/v1/docs",
      {
        "default-src": "'none'",
        "script-src": "'self'",
        "connect-src": "'self'",
        "frame-ancestors": "'none'",
      },
    ],
    [
      "the error reference",
      "/v1/docs/reference/errors",
      { "default-src": "'none'", "frame-ancestors": "'none'" },
    ],
    [
      "the OAuth return page",
      "/oauth/callback/x?state=unknown&code=abc",
      { "default-src": "'none'", "form-action": "'self'", "frame-ancestors": "'none'" },
    ],
  ];
  for (const [name, path, directives] of pages) {
    test(`${name}: a CSP, no framing, no sniffing`, async () => {
      const r = await fetch(s.url + path);
      await r.arrayBuffer();
      expect(r.headers.get("content-type")).toStartWith("text/html");
      expect(cspOf(r)).toMatchObject({ ...directives, "base-uri": "'none'" });
      expect(cspOf(r)["script-src"] ?? "").not.toContain("unsafe");
      expect(r.headers.get("x-frame-options")).toBe("DENY");
      expect(r.headers.get("x-content-type-options")).toBe("nosniff");
    });
  }

  test("the docs page loads its only script from this server", async () => {
    const r = await fetch(`${s.url}/v1/docs`);
    const text = await r.text();
    const sources = [...text.matchAll(/<script[^>]*src="([^"]+)"/g)].map((m) => m[1]);
    expect(sources).toEqual(["/v1/docs/assets/api-reference.js"]);
    const bundle = await fetch(s.url + sources[0]);
    await bundle.arrayBuffer();
    expect(bundle.headers.get("content-type")).toStartWith("text/javascript");
    expect(bundle.headers.get("x-content-type-options")).toBe("nosniff");
  });
});

test("a download (signed URL) is never sniffed", async () => {
  const asset = await uploadAsset(s, s.owner.workspaceId, png(8, 6));
  const listed = await s.request(
    "GET",
    `/v1/workspaces/${s.owner.workspaceId}/assets/${asset.id}?include=download`,
  );
  const r = await fetch(listed.body.download_url);
  await r.arrayBuffer();
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("image/png");
  expect(r.headers.get("x-content-type-options")).toBe("nosniff");
});

describe("cookies", () => {
  const PASSWORD = "correct horse battery";
  const signedIn = async (server: TestServer, email: string) => {
    await bootstrapAccount(server.herald, { email, workspaceName: "Cookies", password: PASSWORD });
    const browser = new TestBrowser(server);
    const r = await browser.signIn(email, PASSWORD);
    return { browser, r };
  };

  test("http: plain names, no Secure", async () => {
    const { browser, r } = await signedIn(s, "cookie-http@example.com");
    expect(r.setCookies.find((c) => c.startsWith("herald_session="))).toMatch(
      /^herald_session=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=\d+$/,
    );
    expect([...browser.cookies.keys()].sort()).toEqual(["herald_csrf", "herald_known", "herald_session"]);
    expect((await browser.get("/dashboard")).status).toBe(200);
  });

  test("https: __Host- names with Secure; the plain names are not read", async () => {
    const secure = await startTestServer();
    try {
      // Served behind a TLS proxy: the base URL says https.
      secure.herald.config.baseUrl = "https://herald.example";
      const { browser, r } = await signedIn(secure, "cookie-https@example.com");
      expect(r.setCookies.find((c) => c.startsWith("__Host-herald_session="))).toMatch(
        /^__Host-herald_session=[A-Za-z0-9]{43}; Path=\/; HttpOnly; SameSite=Lax; Secure; Max-Age=\d+$/,
      );
      expect(r.setCookies.some((c) => c.startsWith("herald_session="))).toBe(false);
      expect([...browser.cookies.keys()].sort()).toEqual([
        "__Host-herald_csrf",
        "__Host-herald_known",
        "__Host-herald_session",
      ]);
      expect((await browser.get("/dashboard")).status).toBe(200);

      // The same values under the plain names (what a sibling subdomain could set) sign nobody in.
      const plain = new TestBrowser(secure);
      for (const [name, value] of browser.cookies) plain.cookies.set(name.replace("__Host-", ""), value);
      const refused = await plain.get("/dashboard");
      expect(refused.status).toBe(303);
      expect(refused.location).toStartWith("/login");

      // Signing out clears the prefixed cookie.
      const out = await browser.submit("/dashboard", {}, "/logout");
      expect(out.setCookies).toContain(
        "__Host-herald_session=; Path=/; HttpOnly; SameSite=Lax; Secure; Max-Age=0",
      );
    } finally {
      await secure.stop();
    }
  });
});
