import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { dashboardWorld, type DashboardWorld, screenOf, type TestBrowser } from "../dashboard/support.ts";
import {
  answerConsent,
  authorizePath,
  createPkcePair,
  REDIRECT_URI,
  redirectParams,
  tokenRequest,
} from "./support.ts";

// A client ID metadata document is served by the client; here a local server, which the test-only
// switch HERALD_DEV_ALLOW_PRIVATE_NETWORK lets Herald read over loopback http.
let world: DashboardWorld;
let owner: TestBrowser;
let documents: ReturnType<typeof Bun.serve>;
let reads = 0;
const docUrl = (name: string) => `http://127.0.0.1:${documents.port}/${name}.json`;

beforeAll(async () => {
  documents = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(request) {
      reads++;
      const url = new URL(request.url);
      const self = `http://127.0.0.1:${documents.port}${url.pathname}`;
      if (url.pathname === "/client.json")
        return Response.json({
          client_id: self,
          client_name: "Hosted assistant",
          redirect_uris: [REDIRECT_URI],
        });
      if (url.pathname === "/impostor.json")
        return Response.json({
          client_id: "https://someone.else/client.json",
          redirect_uris: [REDIRECT_URI],
        });
      if (url.pathname === "/bad-redirect.json")
        return Response.json({ client_id: self, redirect_uris: ["http://evil.example/cb"] });
      return new Response("not found", { status: 404 });
    },
  });
  world = await dashboardWorld({ env: { HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1" } });
  owner = await world.signedIn();
});
afterAll(async () => {
  await world.stop();
  await documents.stop(true);
});

describe("client ID metadata documents", () => {
  test("a client whose id is its document's URL needs no registration: consent, code, token", async () => {
    const clientId = docUrl("client");
    const { verifier, challenge } = createPkcePair();
    const path = authorizePath(world.s.url, clientId, challenge);
    const page = await owner.get(path);
    expect(page.status).toBe(200);
    const screen = screenOf(page.text);
    screen.getByRole("heading", { level: 1, name: "Allow “Hosted assistant” to use Herald?" });
    expect(screen.text()).toMatch(`Its identity is published at 127.0.0.1:${documents.port}`);
    const answered = await answerConsent(owner, path, [
      ["workspace_access", "all"],
      ["scopes", "posts:read"],
      ["decision", "allow"],
    ]);
    const code = redirectParams(answered.location).get("code")!;
    const before = reads;
    const tokens = await tokenRequest(world.s.url, {
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT_URI,
      client_id: clientId,
    });
    expect(tokens.status).toBe(200);
    expect(tokens.body.scope).toBe("posts:read");
    // The document is kept for an hour: the exchange did not read it again.
    expect(reads).toBe(before);
  });

  const refused: [string, string][] = [
    ["a document naming another client_id", "impostor"],
    ["a document whose redirect URIs are not allowed", "bad-redirect"],
    ["a document that is not there", "missing"],
  ];
  for (const [what, name] of refused)
    test(`${what}: an unknown application, shown as a page`, async () => {
      const r = await owner.get(authorizePath(world.s.url, docUrl(name), createPkcePair().challenge));
      expect(r.status).toBe(400);
      expect(r.location).toBeNull();
      screenOf(r.text).getByRole("heading", { level: 1, name: "Unknown application" });
    });
});
