import { Elysia } from "elysia";
import { ProblemError } from "../../core/problem.ts";
import type { Herald } from "../../herald.ts";
import { listApprovals, type ApprovalRow, type ReviewLinkRow } from "../../modules/approvals/repo.ts";
import {
  approveGroupAsReviewer,
  findReviewLinkByToken,
  requestChangesAsReviewer,
  reviewGroupPosts,
  type ReviewOutcome,
} from "../../modules/approvals/review-links.ts";
import { findDestinationById } from "../../modules/destinations/repo.ts";
import type { PostRow } from "../../modules/posts/repo.ts";
import { csrfToken, csrfTokenValid } from "../../modules/sessions/csrf.ts";
import { findWorkspaceById } from "../../modules/workspaces/repo.ts";
import { networkRules } from "../../providers/registry.ts";
import { renderPreview, type PreviewInput } from "../previews/index.ts";
import { mediaOrigins, previewInputOfPost } from "../previews/from-post.ts";
import { messagePage } from "../pages/layout.ts";
import { REVIEW_CSS, REVIEW_CSS_PATH, reviewPage, type ReviewNotice } from "../pages/review.ts";
import { type Browser, browserOf, pageResponse, readForm, stylesheetResponse } from "../pages/respond.ts";
import type { ClientAddress } from "../plugin.ts";
import { FailedAuthLimiter } from "../rate-limit.ts";
import { csrfRefused, formPost, hidden, tooManyAttempts } from "./page-kit.ts";

/** What the review page's handlers share: Herald, the peer address and the failed-lookup limit. */
interface ReviewPages {
  h: Herald;
  clientAddress: ClientAddress;
  /** Unknown, expired or deleted tokens per client address, like failed API keys. */
  lookups: FailedAuthLimiter;
}
type TokenPage = { request: Request; params: { token: string } };

/** Headers of every review answer: never indexed (robots), beside the pages' no-referrer and no-store. */
const NOINDEX = { "x-robots-tag": "noindex, nofollow" };

/**
 * The review page of a review link: GET shows the group's posts as their networks will; the two forms
 * post to `/approve` and `/request-changes`. Outside /v1 and the OpenAPI document, like the other pages.
 * The token is in the path: logs carry the route pattern only, and no page sends a Referer.
 */
export function reviewPageRoutes(h: Herald, clientAddress: ClientAddress) {
  const p: ReviewPages = {
    h,
    clientAddress,
    lookups: new FailedAuthLimiter(
      h.config.authFailuresPerMinute,
      60_000,
      "review links a minute from this address that do not work",
    ),
  };
  return new Elysia()
    .get(REVIEW_CSS_PATH, () => stylesheetResponse(REVIEW_CSS), hidden)
    .get("/review/:token", ({ request, params }) => showReview(p, { request, params }), hidden)
    .post("/review/:token/approve", ({ request, params }) => submitApprove(p, { request, params }), formPost)
    .post(
      "/review/:token/request-changes",
      ({ request, params }) => submitRequestChanges(p, { request, params }),
      formPost,
    );
}

/** The link of a token, or the answer instead of the page: 429 past the failed lookups, else 404. */
async function linkOf(
  p: ReviewPages,
  browser: Browser,
  { request, params }: TokenPage,
): Promise<ReviewLinkRow | Response> {
  const { h } = p;
  const address = p.clientAddress(request);
  const now = h.clock.now();
  try {
    p.lookups.check(address, now);
  } catch (error) {
    return tooManyAttempts(h, browser, error);
  }
  const link = await findReviewLinkByToken(h.db, params.token, now);
  if (link) return link;
  p.lookups.fail(address, now);
  // Unknown, expired and deleted links read alike: the page tells nothing about which tokens exist.
  const page = messagePage(
    { title: "This review link does not work" },
    {
      heading: "This review link does not work",
      paragraphs: [
        "It may have expired or been withdrawn, or the address may be incomplete. Ask the person who sent it for a new link.",
      ],
    },
  );
  return pageResponse(h, browser, page, { status: 404, headers: NOINDEX });
}

/** The form token of a review page: bound to this browser's CSRF cookie and to this review link. */
function reviewCsrf(h: Herald, browser: Browser, link: ReviewLinkRow): string {
  return csrfToken(h.secrets, browser.browserKey, `review:${link.id}`);
}

async function showReview(p: ReviewPages, page: TokenPage) {
  const browser = await browserOf(p.h, page.request);
  const link = await linkOf(p, browser, page);
  if (link instanceof Response) return link;
  return reviewResponse(p.h, browser, page.params.token, link, { notice: null, status: 200 });
}

/** Reads a review form: the link, then the token bound to it; the answer instead when either fails. */
async function reviewForm(p: ReviewPages, page: TokenPage) {
  const browser = await browserOf(p.h, page.request);
  const link = await linkOf(p, browser, page);
  if (link instanceof Response) return link;
  const form = await readForm(page.request);
  const valid =
    !browser.newKey &&
    csrfTokenValid(p.h.secrets, browser.browserKey, `review:${link.id}`, form.get("csrf_token"));
  if (!valid) return csrfRefused(p.h, browser);
  const input = { name: form.get("name") ?? "", comment: form.get("comment") ?? "" };
  return { browser, link, input };
}

async function submitApprove(p: ReviewPages, page: TokenPage) {
  const read = await reviewForm(p, page);
  if (read instanceof Response) return read;
  const { browser, link, input } = read;
  const { h } = p;
  let outcome: ReviewOutcome;
  try {
    outcome = await approveGroupAsReviewer(h, link, input, h.clock.now());
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    return reviewResponse(h, browser, page.params.token, link, {
      notice: null,
      status: 400,
      changes: null,
      approveError: error.errors[0]?.detail ?? error.detail,
    });
  }
  return reviewResponse(h, browser, page.params.token, link, {
    notice: approvedNotice(outcome),
    status: 200,
  });
}

async function submitRequestChanges(p: ReviewPages, page: TokenPage) {
  const read = await reviewForm(p, page);
  if (read instanceof Response) return read;
  const { browser, link, input } = read;
  const { h } = p;
  try {
    const outcome = await requestChangesAsReviewer(h, link, input, h.clock.now());
    return reviewResponse(h, browser, page.params.token, link, {
      notice: changesNotice(outcome),
      status: 200,
    });
  } catch (error) {
    if (!(error instanceof ProblemError)) throw error;
    return reviewResponse(h, browser, page.params.token, link, {
      notice: null,
      status: 400,
      changes: { ...input, error: error.errors[0]?.detail ?? error.detail },
    });
  }
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

function approvedNotice(outcome: ReviewOutcome): ReviewNotice {
  const lines: string[] = [];
  if (outcome.decided.length > 0)
    lines.push(`You approved ${count(outcome.decided.length, "post")}: they go out as planned.`);
  else lines.push("No post was waiting for approval, so nothing changed.");
  for (const { post, detail } of outcome.refused)
    lines.push(`The ${networkName(post.channel)} post could not be approved: ${detail}`);
  if (outcome.commented.length > 0) lines.push("Your comment was sent to the team.");
  return {
    tone: outcome.refused.length > 0 ? "warn" : "ok",
    title: outcome.refused.length > 0 ? "Some posts could not be approved" : "Thank you",
    lines,
  };
}

function changesNotice(outcome: ReviewOutcome): ReviewNotice {
  const lines =
    outcome.decided.length > 0
      ? [`${count(outcome.decided.length, "post")} went back to the team with your comment.`]
      : ["No post was waiting for approval; your comment was sent to the team."];
  return { tone: "ok", title: "Thank you: changes requested", lines };
}

function networkName(channel: string): string {
  return networkRules(channel)?.displayName ?? channel;
}

const STATUS: Record<ApprovalRow["status"], string> = {
  requested: "Awaiting approval",
  approved: "Approved",
  changes_requested: "Changes requested",
};

/** A post's line on the page: its approval (and when it goes out once approved), or its state. */
function statusOf(post: PostRow, approval: ApprovalRow | undefined): string {
  if (!approval || (approval.status === "requested" && post.state !== "draft"))
    return `Not waiting for approval (${post.state.replaceAll("_", " ")})`;
  if (approval.status !== "requested") return STATUS[approval.status];
  const { when } = approval.requestedWhen;
  const planned =
    when === "now"
      ? "goes out as soon as it is approved"
      : when === "queue"
        ? "goes out at the next queue slot once approved"
        : Number.isNaN(Date.parse(when))
          ? null
          : `planned for ${new Date(when).toISOString().slice(0, 16).replace("T", " ")} UTC`;
  return planned ? `${STATUS.requested}: ${planned}` : STATUS.requested;
}

/** When an approved post is planned to go out, for its preview's time: a requested instant only. */
function plannedAt(post: PostRow, approval: ApprovalRow | undefined): string | null {
  if (post.scheduledAt !== null) return new Date(post.scheduledAt).toISOString();
  const when = approval?.requestedWhen.when ?? "";
  return /^\d{4}-\d{2}-\d{2}T/.test(when) && !Number.isNaN(Date.parse(when))
    ? new Date(when).toISOString()
    : null;
}

/**
 * The page with the group's posts as they stand now. Its CSP lets media load from where their short
 * links point (Herald, or the bucket's presigned links) and nowhere else.
 */
async function reviewResponse(
  h: Herald,
  browser: Browser,
  token: string,
  link: ReviewLinkRow,
  result: {
    notice: ReviewNotice | null;
    status: number;
    changes?: { name: string; comment: string; error: string } | null;
    approveError?: string;
  },
): Promise<Response> {
  const workspace = await findWorkspaceById(h.db, link.workspaceId);
  const posts = await reviewGroupPosts(h.db, link);
  const approvals = new Map(
    (
      await listApprovals(
        h.db,
        posts.map((x) => x.id),
      )
    ).map((a) => [a.postId, a]),
  );
  const inputs: PreviewInput[] = [];
  const views = [];
  for (const post of posts) {
    const destination = post.destinationId
      ? ((await findDestinationById(h.db, post.destinationId)) ?? null)
      : null;
    const input = {
      ...(await previewInputOfPost(h, post, destination)),
      at: plannedAt(post, approvals.get(post.id)),
    };
    inputs.push(input);
    views.push({
      title: destination
        ? `${networkName(post.channel)} · ${destination.displayName}`
        : networkName(post.channel),
      status: statusOf(post, approvals.get(post.id)),
      preview: renderPreview(input),
    });
  }
  const awaiting = posts.filter((x) => approvals.get(x.id)?.status === "requested" && x.state === "draft");
  const sources = ["'self'", ...mediaOrigins(inputs)].join(" ");
  const notice: ReviewNotice | null = result.approveError
    ? { tone: "warn", title: "Nothing was approved", lines: [result.approveError] }
    : result.notice;
  const page = reviewPage({
    workspaceName: workspace?.name ?? "your team",
    expiresAt: link.expiresAt,
    posts: views,
    awaiting: awaiting.length,
    csrf: reviewCsrf(h, browser, link),
    action: `/review/${token}`,
    notice,
    changes: result.changes ?? { name: "", comment: "", error: null },
  });
  return pageResponse(h, browser, page, {
    status: result.status,
    headers: {
      ...NOINDEX,
      "content-security-policy":
        `default-src 'none'; style-src 'self'; img-src ${sources}; media-src ${sources}; ` +
        "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    },
  });
}
