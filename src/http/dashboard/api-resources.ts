/**
 * The API's answers as the dashboard reads them, derived from the routes' response schemas (the
 * contract), so a page cannot read a field the API does not send.
 */
import type { Static } from "@sinclair/typebox";
import type { ProblemSchema } from "../docs.ts";
import type {
  AnalyticsSeries as Series,
  GroupAnalytics as GroupAnalyticsSchema,
} from "../routes/analytics-schemas.ts";
import type { Asset as AssetSchema, AssetUpload as AssetUploadSchema } from "../routes/assets-schemas.ts";
import type {
  BillingCheckoutSession,
  BillingPortalSession,
  Billing as BillingSchema,
} from "../routes/billing-schemas.ts";
import type {
  DestinationConnection as Connection,
  Destination as DestinationSchema,
} from "../routes/destinations-schemas.ts";
import type {
  Post as PostSchema,
  PostSet as PostSetSchema,
  PostValidation as PostValidationSchema,
  Queue as QueueSchema,
} from "../routes/posts-schemas.ts";
import type { PostImport as PostImportSchema } from "../routes/post-imports-schemas.ts";
import type { Invitation as InvitationSchema, Member as MemberSchema } from "../routes/team-schemas.ts";
import type {
  WebhookDelivery as WebhookDeliverySchema,
  WebhookEndpoint as WebhookEndpointSchema,
  WebhookEndpointWithSecret as WebhookEndpointWithSecretSchema,
} from "../routes/webhooks-schemas.ts";
import type { Workspace as WorkspaceSchema } from "../routes/workspaces-schemas.ts";
import type { TrackedLink as TrackedLinkSchema } from "../routes/links-schemas.ts";

/** A page of a listing (`listingSchema`). */
export interface Listing<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}

export type Problem = Static<typeof ProblemSchema>;
export type Post = Static<typeof PostSchema>;
export type PostSet = Static<typeof PostSetSchema>;
export type PostValidation = Static<typeof PostValidationSchema>;
export type PostImport = Static<typeof PostImportSchema>;
export type Queue = Static<typeof QueueSchema>;
export type Destination = Static<typeof DestinationSchema>;
export type DestinationConnection = Static<typeof Connection>;
export type Workspace = Static<typeof WorkspaceSchema>;
export type Asset = Static<typeof AssetSchema>;
export type AssetUpload = Static<typeof AssetUploadSchema>;
export type Billing = Static<typeof BillingSchema>;
/** A Stripe page the person is sent to: Checkout or the customer portal. */
export type BillingSession = Static<typeof BillingCheckoutSession> | Static<typeof BillingPortalSession>;
export type Member = Static<typeof MemberSchema>;
export type Invitation = Static<typeof InvitationSchema>;
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecretSchema>;
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;
export type GroupAnalytics = Static<typeof GroupAnalyticsSchema>;
export type AnalyticsSeries = Static<typeof Series>;
export type TrackedLink = Static<typeof TrackedLinkSchema>;
