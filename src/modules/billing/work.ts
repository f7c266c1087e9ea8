/**
 * What a `read_only` account may still do, decided in this one table for every authenticated write
 * operation of the API (`METHOD /path` as the OpenAPI document writes it, relative to /v1):
 * `creates_work` is refused with 402 while the account is read-only (or the workspace's share of the
 * subscription has ended); `keeps_working` stays open: reads, exports, cancellations, deletions,
 * settings, revoking access, and the billing operations that lead out of read-only. Reads (GET) are
 * never refused. A write missing here counts as `creates_work` (fail closed), and
 * test/billing/entitlement.test.ts fails until it is classified.
 */
export const WRITE_OPERATIONS: Readonly<Record<string, "creates_work" | "keeps_working">> = {
  // Account, keys, team
  "POST /me/revoke": "keeps_working",
  "POST /account/invitations": "creates_work",
  "POST /account/invitations/{invitation_id}/resend": "creates_work",
  "POST /account/invitations/{invitation_id}/revoke": "keeps_working",
  "POST /account/members/{member_id}/remove": "keeps_working",
  "POST /feedback": "keeps_working",
  // Billing: the way back to a working subscription, and cancelling
  "POST /billing/checkout-sessions": "keeps_working",
  "POST /billing/portal-sessions": "keeps_working",
  "POST /billing/conversion": "keeps_working",
  "POST /workspaces/{workspace_id}/subscription/cancel": "keeps_working",
  // Workspaces and their settings
  "POST /workspaces": "creates_work",
  "PATCH /workspaces/{workspace_id}": "keeps_working",
  "PUT /workspaces/{workspace_id}/queue": "keeps_working",
  "PATCH /workspaces/{workspace_id}/chat-notifications": "keeps_working",
  // Assets
  "POST /workspaces/{workspace_id}/asset-uploads": "creates_work",
  "POST /workspaces/{workspace_id}/asset-uploads/{upload_id}/complete": "creates_work",
  "DELETE /workspaces/{workspace_id}/assets/{asset_id}": "keeps_working",
  // Destinations
  "POST /workspaces/{workspace_id}/destination-connections": "creates_work",
  "PATCH /workspaces/{workspace_id}/destinations/{destination_id}": "keeps_working",
  "DELETE /workspaces/{workspace_id}/destinations/{destination_id}": "keeps_working",
  // Posts: new content and anything that (re)starts publishing creates work
  "POST /workspaces/{workspace_id}/posts": "creates_work",
  "POST /workspaces/{workspace_id}/posts/validate": "keeps_working",
  // A CSV import stores posts as Create Post does (a dry run too is refused: it exists to import)
  "POST /workspaces/{workspace_id}/post-imports": "creates_work",
  "POST /workspaces/{workspace_id}/posts/publish": "creates_work",
  "POST /workspaces/{workspace_id}/posts/move": "creates_work",
  "PATCH /workspaces/{workspace_id}/posts/{post_id}": "keeps_working",
  "DELETE /workspaces/{workspace_id}/posts/{post_id}": "keeps_working",
  "POST /workspaces/{workspace_id}/posts/{post_id}/cancel": "keeps_working",
  "POST /workspaces/{workspace_id}/posts/{post_id}/retry": "creates_work",
  "POST /workspaces/{workspace_id}/posts/{post_id}/reschedule": "creates_work",
  // Approvals: approving sends posts out; rejecting, comments and review links do not (a reviewer's
  // approval through a link is refused on the review page as the approve operation is)
  "POST /workspaces/{workspace_id}/posts/{post_id}/approve": "creates_work",
  "POST /workspaces/{workspace_id}/posts/{post_id}/reject": "keeps_working",
  "POST /workspaces/{workspace_id}/posts/{post_id}/comments": "keeps_working",
  "POST /workspaces/{workspace_id}/review-links": "keeps_working",
  "DELETE /workspaces/{workspace_id}/review-links/{review_link_id}": "keeps_working",
  // Analytics of what was already published is a read
  "POST /workspaces/{workspace_id}/analytics/post-groups/{group}/refresh": "keeps_working",
  // Webhooks: new endpoints and deliveries create work; changing, securing, removing does not
  "POST /workspaces/{workspace_id}/webhook-endpoints": "creates_work",
  "PATCH /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}": "keeps_working",
  "DELETE /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}": "keeps_working",
  "POST /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/rotate-secret": "keeps_working",
  "POST /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/test": "creates_work",
  "POST /workspaces/{workspace_id}/webhook-endpoints/{endpoint_id}/deliveries/{delivery_id}/redeliver":
    "creates_work",
};

const byRoute = new Map<string, boolean>();

/**
 * Whether a request to an Elysia route pattern (`/v1/workspaces/:workspace_id/posts`) creates work.
 * Reads never do; unknown writes do.
 */
export function createsWork(method: string, route: string): boolean {
  if (method === "GET" || method === "HEAD" || method === "OPTIONS") return false;
  const key = `${method} ${route}`;
  let found = byRoute.get(key);
  if (found === undefined) {
    const path = route.replace(/^\/v1(?=\/)/, "").replace(/:([A-Za-z0-9_]+)/g, "{$1}");
    found = WRITE_OPERATIONS[`${method} ${path}`] !== "keeps_working";
    byRoute.set(key, found);
  }
  return found;
}
