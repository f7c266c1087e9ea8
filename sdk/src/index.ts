// @herald/client: a typed client of the Herald API (openapi-fetch over types generated from Herald's
// OpenAPI document), with idempotent retries, pagination and webhook verification.
export { createHeraldClient, type HeraldClient, type HeraldClientOptions } from "./client.ts";
export { paginate, type ListingItem, type ListingPath } from "./paginate.ts";
export { HeraldApiError, isProblem, type Problem } from "./problem.ts";
export { type RetryOptions, retryAfterMs } from "./retry.ts";
export {
  type EventPostSummary,
  type HeraldEvent,
  type HeraldPostEvent,
  type HeraldTestEvent,
  verifyWebhook,
  type VerifyWebhookOptions,
  WebhookVerificationError,
  type WebhookVerificationReason,
} from "./webhooks.ts";
export type { components, operations, paths } from "./schema.ts";
