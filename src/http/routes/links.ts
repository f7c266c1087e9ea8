import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { followShortLink, presentPostLinks } from "../../modules/links/service.ts";
import { requirePost } from "../../modules/posts/actions.ts";
import { listingSchema, operation } from "../docs.ts";
import { messagePage } from "../pages/layout.ts";
import { pageResponse, type Browser } from "../pages/respond.ts";
import type { ClientAddress, heraldPlugin } from "../plugin.ts";
import { FailedAuthLimiter } from "../rate-limit.ts";
import { handler, type PublicRouteContext, type RouteContext } from "./context.ts";
import { hidden } from "./page-kit.ts";
import { TrackedLink } from "./links-schemas.ts";
import { PostParams } from "./posts-schemas.ts";

/** Unknown codes an address may try a minute before it is answered 429 (valid codes are never limited). */
const UNKNOWN_CODES_PER_MINUTE = 30;

/**
 * A visitor of a short link is not a Herald user: no CSRF key, no session, so the pages' answer sets
 * no cookie (nothing is kept about who clicked).
 */
const VISITOR: Browser = { browserKey: "", newKey: false, sessionToken: null, session: null };

/**
 * The redirect's headers: never cached (a cache would swallow clicks), and the page a visitor came
 * from is not passed on beyond its origin.
 */
const REDIRECT_HEADERS = {
  "cache-control": "no-store",
  "referrer-policy": "strict-origin-when-cross-origin",
  "x-content-type-options": "nosniff",
};

/** GET (and HEAD, which Bun answers from GET) /l/{code}: 302 to the target; GET counts the click. */
async function followLink(
  h: Herald,
  unknownCodes: FailedAuthLimiter,
  clientAddress: ClientAddress,
  { request, params }: Pick<PublicRouteContext<unknown, unknown, { code: string }>, "request" | "params">,
) {
  const target = await followShortLink(h, params.code, request.method === "GET");
  if (target !== null)
    return new Response(null, { status: 302, headers: { ...REDIRECT_HEADERS, location: target } });
  const address = clientAddress(request);
  const now = h.clock.now();
  try {
    unknownCodes.check(address, now);
  } catch {
    return linkPage(h, 429, "Too many unknown links", "Wait a minute before trying another link.", {
      "retry-after": "60",
    });
  }
  unknownCodes.fail(address, now);
  return linkPage(
    h,
    404,
    "This link does not exist",
    "Check that the whole link was copied. Links shared by a post stay valid as long as the post is kept.",
  );
}

function linkPage(h: Herald, status: number, heading: string, text: string, headers = {}) {
  const page = messagePage({ title: heading }, { heading, paragraphs: [text] });
  return pageResponse(h, VISITOR, page, { status, headers });
}

/** GET …/posts/{post}/links: the post's short links with their clicks. */
async function listPostLinks(h: Herald, c: RouteContext<unknown, unknown, Static<typeof PostParams>>) {
  const post = await requirePost(h.db, c.params.workspace_id, c.params.post_id);
  return { data: await presentPostLinks(h, post.id), has_more: false, next_cursor: null };
}

const doc = {
  listPostLinks: operation({
    scope: "posts:read",
    operationId: "listPostLinks",
    summary: "List a post's tracked links",
    description:
      "The short links the post published (one per URL of its body, made when it was first sent; " +
      "none when the workspace's link_tracking was off or the post set link_tracking: false) with " +
      "the clicks each has had. Every link is on one page.",
    tag: "Posts",
    errors: [404],
  }),
};

/** The short links' redirect, outside /v1 and without a key. */
export function shortLinkRoutes(h: Herald, clientAddress: ClientAddress) {
  const unknownCodes = new FailedAuthLimiter(
    UNKNOWN_CODES_PER_MINUTE,
    60_000,
    "unknown short links a minute from this address",
  );
  // Named parts, not the context whole (Elysia would prepare headers and cookies for every click).
  return new Elysia().get(
    "/l/:code",
    ({ request, params }) => followLink(h, unknownCodes, clientAddress, { request, params }),
    hidden,
  );
}

/** A post's tracked links, under /v1. */
export function postLinkRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia({ prefix: "/workspaces/:workspace_id" })
    .use(rails)
    .get("/posts/:post_id/links", handler(h, listPostLinks), {
      ...doc.listPostLinks,
      params: PostParams,
      response: { 200: listingSchema(TrackedLink) },
    });
}
