// LinkedIn through the real server: connecting with OAuth (the member and the two pages they
// administer become three destinations), the 422 when Herald's LinkedIn app is not configured,
// Create Post → engine → /rest/posts with receipts at linkedin.com/feed/update/<urn>, an image on a
// page, a video that keeps the post awaiting the provider until LinkedIn has processed it, an expired
// token renewed by the engine, and validation refusals with their JSON pointers.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { uploadAsset } from "../assets/helpers.ts";
import { mp4, png } from "../assets/samples.ts";
import { startLinkedInFake, type LinkedInFake } from "../fakes/linkedin.ts";
import { expectProblem } from "../helpers/problems.ts";
import { apiPosting } from "./support.ts";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { outbox } from "../posts/engine-helpers.ts";
import type { PostsWorld } from "../posts/helpers.ts";
import { LINKEDIN_RECHECK_MS } from "../../src/providers/linkedin/adapter.ts";
import { returnFromOAuth } from "../helpers/oauth-return.ts";

let s: TestServer;
let fake: LinkedInFake;
let ws: string;

/** Destination ids by display name: the member and the pages. */
const destinations: Record<string, string> = {};

const api = apiPosting("linkedin", () => ({ s, ws }));
const { createPost, getPost, publishNow } = api;

function env(f: LinkedInFake): Record<string, string> {
  return {
    HERALD_DEV_ALLOW_PRIVATE_NETWORK: "1",
    HERALD_LINKEDIN_CLIENT_ID: f.clientId,
    HERALD_LINKEDIN_CLIENT_SECRET: f.clientSecret,
    HERALD_LINKEDIN_API_BASE: f.origin,
    HERALD_LINKEDIN_AUTH_BASE: f.origin,
    HERALD_LINKEDIN_TOKEN_BASE: f.origin,
    // Not the default: the header must carry what the operator set.
    HERALD_LINKEDIN_API_VERSION: "202609",
  };
}

beforeAll(async () => {
  fake = await startLinkedInFake({ refreshTokens: true });
  s = await startTestServer({ env: env(fake) });
  ws = s.owner.workspaceId;
});
afterAll(async () => {
  await s.stop();
  await fake.stop();
});

describe("connecting LinkedIn", () => {
  test("OAuth through the API: one authorization connects the member and each page they administer", async () => {
    const started = await s.request("POST", `/v1/workspaces/${ws}/destination-connections`, {
      body: { provider: "linkedin" },
    });
    expect({ status: started.status, text: started.text }).toMatchObject({ status: 201 });
    const url = new URL(started.body.authorization_url);
    expect(url.origin + url.pathname).toBe(`${fake.origin}/oauth/v2/authorization`);
    expect(url.searchParams.get("redirect_uri")).toBe(`${s.url}/oauth/callback/linkedin`);
    const authorize = await fetch(url, { redirect: "manual" });
    expect(authorize.status).toBe(302);
    const callback = await returnFromOAuth(authorize.headers.get("location")!);
    expect({ status: callback.status, text: await callback.text() }).toMatchObject({ status: 200 });
    const done = await s.request("GET", `/v1/workspaces/${ws}/destination-connections/${started.body.id}`);
    expect(done.body).toMatchObject({ status: "completed", error: null });

    const listed = await s.request("GET", `/v1/workspaces/${ws}/destinations`);
    const linkedin = listed.body.data.filter((d: any) => d.channel === "linkedin");
    expect(linkedin.map((d: any) => [d.display_name, d.status]).sort()).toEqual([
      ["Alice Example", "ready"],
      ["Devtestco", "ready"],
      ["Herald Labs", "ready"],
    ]);
    for (const d of linkedin) destinations[d.display_name] = d.id;
    expect(done.body.destination_id).toBe(destinations["Alice Example"]);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /oauth/v2/authorization",
      "POST /oauth/v2/accessToken",
      "GET /v2/userinfo",
      "GET /rest/organizationAcls",
      "GET /rest/organizations/2414183",
      "GET /rest/organizations/5590506",
    ]);
  });
});

describe("publishing to LinkedIn", () => {
  test("a member's post with options: escaped commentary, CONNECTIONS, resharing off, a feed/update receipt", async () => {
    const post = await publishNow(destinations["Alice Example"]!, {
      body: ["Hello (world) #herald"],
      destination_options: { linkedin: { visibility: "connections", allow_resharing: false } },
    });
    expect(post.state).toBe("published");
    const stored = fake.posts.at(-1)!;
    expect(stored.version).toBe("202609");
    const versioned = fake.requests.filter((r) => r.path.startsWith("/rest/") || r.path === "/v2/userinfo");
    expect(versioned.length).toBeGreaterThan(3);
    expect(new Set(versioned.map((r) => r.headers["linkedin-version"]))).toEqual(new Set(["202609"]));
    expect(stored).toMatchObject({
      author: "urn:li:person:782bbtaQ",
      commentary: "Hello \\(world\\) #herald",
      visibility: "CONNECTIONS",
      isReshareDisabledByAuthor: true,
    });
    expect(post.receipts).toEqual([
      expect.objectContaining({
        item_index: 0,
        provider_object_id: stored.urn,
        url: `https://www.linkedin.com/feed/update/${stored.urn}`,
      }),
    ]);
  });

  test("an image on a page: uploaded for the page, attached, published", async () => {
    const bytes = png(40, 30);
    const asset = await uploadAsset(s, ws, bytes, { contentType: "image/png", fileName: "square.png" });
    const post = await publishNow(destinations.Devtestco!, { body: ["From the page"], media: [asset.id] });
    expect(post.state).toBe("published");
    const image = fake.media.at(-1)!;
    expect(image).toMatchObject({ kind: "image", owner: "urn:li:organization:2414183", size: bytes.length });
    expect(fake.posts.at(-1)).toMatchObject({
      author: "urn:li:organization:2414183",
      content: { media: { id: image.urn } },
    });
  });

  test("a video LinkedIn is still processing keeps the post awaiting the provider; it is published once AVAILABLE", async () => {
    const asset = await uploadAsset(s, ws, mp4(320, 240, 4, { mdatBytes: 100_000 }), {
      kind: "video",
      contentType: "video/mp4",
      fileName: "clip.mp4",
    });
    fake.videoProcessingPolls = 1000;
    const created = await createPost(destinations["Herald Labs"]!, {
      body: ["Watch this"],
      media: [asset.id],
    });
    expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
    const id = created.body.posts[0].id;
    const postsBefore = fake.posts.length;
    await s.server.engine.runUntilIdle(); // uploads, finalizes, polls a few times inline, then waits
    expect((await getPost(id)).state).toBe("awaiting-provider");
    const video = fake.media.at(-1)!;
    expect(video).toMatchObject({ kind: "video", status: "PROCESSING", received: asset.byte_size });
    expect(video.finalizedWith).toEqual(video.parts.map((p) => p.etag!));
    expect(fake.posts.length).toBe(postsBefore);

    video.pollsLeft = 0;
    s.clock.advance(LINKEDIN_RECHECK_MS + 1000);
    await s.server.engine.runUntilIdle();
    const published = await getPost(id);
    expect(published.state).toBe("published");
    const stored = fake.posts.at(-1)!;
    expect(stored).toMatchObject({
      author: "urn:li:organization:5590506",
      content: { media: { id: video.urn } },
    });
    expect(published.receipts[0].url).toBe(`https://www.linkedin.com/feed/update/${stored.urn}`);
    expect((await outbox({ s } as PostsWorld, id)).map((e) => e.type)).toEqual([
      "post.awaiting-provider",
      "post.published",
    ]);
  });

  test("an expired token is renewed with the refresh token and the post goes out", async () => {
    fake.expireTokens();
    const refreshesBefore = fake.tokenRequests.filter((r) => r.grant_type === "refresh_token").length;
    const post = await publishNow(destinations["Alice Example"]!, { body: ["after a refresh"] });
    expect(post.state).toBe("published");
    expect(fake.tokenRequests.filter((r) => r.grant_type === "refresh_token").length).toBe(
      refreshesBefore + 1,
    );
    expect(fake.posts.at(-1)!.commentary).toBe("after a refresh");
  });

  test("a page with visibility connections is refused when the post is made, at the option", async () => {
    const sent = fake.requests.length;
    const r = await createPost(destinations.Devtestco!, {
      body: ["only for my connections"],
      destination_options: { linkedin: { visibility: "connections" } },
    });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/destination_options/linkedin/visibility"]);
    expect(r.body.errors[0].detail).toContain("page has no connections");
    expect(fake.requests.length).toBe(sent);
    // A member has connections: the same options are accepted for them.
    const member = await createPost(destinations["Alice Example"]!, {
      body: ["only for my connections"],
      destination_options: { linkedin: { visibility: "connections" } },
    });
    expect(member.status).toBe(202);
  });
});

describe("validation", () => {
  test("text over 3,000 characters as LinkedIn counts them is a 422 pointing at the body item", async () => {
    const r = await createPost(destinations["Alice Example"]!, { body: [`${"a".repeat(2999)}(`] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/0"]);
  });

  test("a second body item is refused where it is: LinkedIn has no threads", async () => {
    const r = await createPost(destinations["Alice Example"]!, { body: ["one", "two"] });
    expectProblem(r, 422, "public_unpublishable", ["/posts/0/body/1"]);
  });

  test("an unknown visibility is refused by the options schema", async () => {
    const r = await createPost(destinations["Alice Example"]!, {
      body: ["x"],
      destination_options: { linkedin: { visibility: "friends" } },
    });
    expectProblem(r, 400, "public_invalid_request");
    expect(r.body.errors.map((e: { pointer: string }) => e.pointer)).toContain(
      "/posts/0/destination_options/linkedin/visibility",
    );
  });
});

/** Connects a LinkedIn account through the OAuth return; the completed connection session. */
async function connectThroughOAuth(server: TestServer) {
  const workspace = server.owner.workspaceId;
  const started = await server.request("POST", `/v1/workspaces/${workspace}/destination-connections`, {
    body: { provider: "linkedin" },
  });
  const authorize = await fetch(started.body.authorization_url, { redirect: "manual" });
  expect((await returnFromOAuth(authorize.headers.get("location")!)).status).toBe(200);
  return server.request("GET", `/v1/workspaces/${workspace}/destination-connections/${started.body.id}`);
}

describe("a self-serve app (no refresh tokens)", () => {
  test("the credentials job leaves the token alone until it expires, then asks for reauthorization", async () => {
    const selfServe = await startLinkedInFake({ refreshTokens: false });
    const server = await startTestServer({ env: env(selfServe) });
    try {
      const workspace = server.owner.workspaceId;
      const done = await connectThroughOAuth(server);
      const path = `/v1/workspaces/${workspace}/destinations/${done.body.destination_id}`;
      const DAY = 24 * 60 * 60 * 1000;
      // Inside the last week of the 60-day token: nothing can be renewed, and it still works.
      server.clock.advance(55 * DAY);
      await server.server.scheduler.runNow("credentials-renewal");
      expect((await server.request("GET", path)).body.status).toBe("ready");
      expect(selfServe.requests.some((r) => r.path === "/oauth/v2/accessToken" && r.method === "POST")).toBe(
        true,
      );
      const tokenCalls = selfServe.requests.filter((r) => r.path === "/oauth/v2/accessToken").length;
      // Past its expiry: the destination asks to be connected again, without a refresh call.
      server.clock.advance(6 * DAY);
      await server.server.scheduler.runNow("credentials-renewal");
      expect((await server.request("GET", path)).body).toMatchObject({
        status: "unavailable",
        unavailable_reason: "reauthorization_required",
      });
      expect(selfServe.requests.filter((r) => r.path === "/oauth/v2/accessToken").length).toBe(tokenCalls);
    } finally {
      await server.stop();
      await selfServe.stop();
    }
  });
});

describe("a LinkedIn-Version LinkedIn retired", () => {
  test("the post fails once with the setting and the version named; the destinations show it; nothing is retried", async () => {
    const retiring = await startLinkedInFake();
    const server = await startTestServer({ env: env(retiring) });
    try {
      const workspace = server.owner.workspaceId;
      const done = await connectThroughOAuth(server);
      // A year on, LinkedIn no longer serves 202609.
      retiring.activeVersions = { oldest: "202610", newest: "202611" };
      const created = await server.request("POST", `/v1/workspaces/${workspace}/posts`, {
        headers: { "idempotency-key": "retired-version" },
        body: {
          when: "now",
          confirmed: true,
          group: "retired-version",
          posts: [{ destination_id: done.body.destination_id, body: ["Still on 202609"] }],
        },
      });
      expect({ status: created.status, text: created.text }).toMatchObject({ status: 202 });
      const postPath = `/v1/workspaces/${workspace}/posts/${created.body.posts[0].id}?include=attempts`;
      await server.server.engine.runUntilIdle();
      server.clock.advance(6 * 60 * 60 * 1000);
      await server.server.engine.runUntilIdle();
      const post = (await server.request("GET", postPath)).body;
      expect(post.state).toBe("failed");
      expect(post.last_error).toMatchObject({
        code: "provider_configuration_error",
        retryable: true,
        user_action: "contact_operator",
      });
      expect(post.last_error.message).toContain("HERALD_LINKEDIN_API_VERSION");
      expect(post.last_error.message).toContain("202609");
      expect(post.attempts).toHaveLength(1);
      expect(post.attempts[0].provider).toMatchObject({
        status_code: 426,
        error_code: "NONEXISTENT_VERSION",
      });
      const creates = retiring.requests.filter((r) => r.method === "POST" && r.path === "/rest/posts");
      expect(creates).toHaveLength(1);
      expect(retiring.posts).toEqual([]);
      const listed = await server.request("GET", `/v1/workspaces/${workspace}/destinations`);
      expect(listed.body.data.map((d: any) => [d.status, d.unavailable_reason])).toEqual(
        listed.body.data.map(() => ["unavailable", "api_version_retired"]),
      );
    } finally {
      await server.stop();
      await retiring.stop();
    }
  });
});
