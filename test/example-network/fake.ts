// Example Social's API, as small as a network can be: a session from a handle and an app password,
// media uploads, posts that reply to posts, and each post's numbers. Everything lives in memory.
import { newControls, serveFake, type FailSpec, type FakeControls } from "../fakes/shared.ts";

/** A post Example Social holds. */
export interface ExamplePost {
  id: string;
  author: string;
  text: string;
  mediaIds: string[];
  replyTo: string | null;
  options: Record<string, unknown>;
  /** What GET /v1/posts/{id}/stats answers (set by a test). */
  stats: { views: number; likes: number; replies: number };
}

/** A media file Example Social holds. */
export interface ExampleMedia {
  id: string;
  contentType: string;
  bytes: number;
  altText: string | null;
}

export interface ExampleFake extends FakeControls {
  origin: string;
  posts: ExamplePost[];
  media: ExampleMedia[];
  stop(): Promise<void>;
}

/** Starts Example Social with one account: handle `ada.example`, app password `ada-app-pass`. */
export async function startExampleFake(): Promise<ExampleFake> {
  const failures: { remaining: number; spec: FailSpec }[] = [];
  const controls = newControls(failures);
  const fake: ExampleFake = { ...controls, posts: [], media: [] };
  const token = "example-token-ada";
  const json = (body: unknown, status = 200) => Response.json(body, { status });
  const signedIn = (request: Request) => request.headers.get("authorization") === `Bearer ${token}`;
  const served = serveFake({
    controls: fake,
    failures,
    defaultFailure: (status) => ({
      body: { error: `failure ${status}` },
      headers: status === 429 ? { "retry-after": "60" } : ({} as Record<string, string>),
    }),
    route: async (request, url) => {
      if (request.method === "POST" && url.pathname === "/v1/session") {
        const body = (await request.json()) as { handle?: string; password?: string };
        if (body.handle !== "ada.example" || body.password !== "ada-app-pass")
          return json({ error: "wrong handle or app password" }, 401);
        return json({ account_id: "acct-ada", handle: "ada.example", name: "Ada Example", token });
      }
      if (!signedIn(request)) return json({ error: "not signed in" }, 401);
      if (request.method === "POST" && url.pathname === "/v1/media") {
        const bytes = (await request.arrayBuffer()).byteLength;
        const media: ExampleMedia = {
          id: `media-${fake.media.length + 1}`,
          contentType: request.headers.get("content-type") ?? "",
          bytes,
          altText: request.headers.get("x-alt-text"),
        };
        fake.media.push(media);
        return json({ id: media.id }, 201);
      }
      if (request.method === "POST" && url.pathname === "/v1/posts") {
        const body = (await request.json()) as Omit<ExamplePost, "id" | "author" | "stats">;
        if (body.replyTo !== null && !fake.posts.some((p) => p.id === body.replyTo))
          return json({ error: "the post replied to does not exist" }, 422);
        const post: ExamplePost = {
          ...body,
          id: `post-${fake.posts.length + 1}`,
          author: "acct-ada",
          stats: { views: 0, likes: 0, replies: 0 },
        };
        fake.posts.push(post);
        return json({ id: post.id, url: `${fake.origin}/@ada.example/${post.id}` }, 201);
      }
      const stats = /^\/v1\/posts\/([^/]+)\/stats$/.exec(url.pathname);
      if (request.method === "GET" && stats) {
        const post = fake.posts.find((p) => p.id === stats[1]);
        return post ? json(post.stats) : json({ error: "no such post" }, 404);
      }
      return json({ error: "not found" }, 404);
    },
  });
  fake.origin = served.origin;
  fake.stop = served.stop;
  return fake;
}
