/**
 * The API's answers as the dashboard reads them, derived from the routes' response schemas (the
 * contract), so a page cannot read a field the API does not send.
 */
import type { Static } from "@sinclair/typebox";
import type { ProblemSchema } from "../docs.ts";
import type { GroupAnalytics as GroupAnalyticsSchema, Series } from "../routes/analytics.ts";
import type { Asset as AssetSchema, AssetUpload as AssetUploadSchema } from "../routes/assets.ts";
import type { Billing as BillingSchema, HostedSession } from "../routes/billing.ts";
import type { Connection, Destination as DestinationSchema } from "../routes/destinations.ts";
import type { Invitation as InvitationSchema } from "../routes/invitations.ts";
import type { Member as MemberSchema } from "../routes/members.ts";
import type { PostValidation as PostValidationSchema } from "../routes/posts.ts";
import type {
  Post as PostSchema,
  PostSet as PostSetSchema,
  Queue as QueueSchema,
} from "../routes/posts-schemas.ts";
import type {
  WebhookDelivery as WebhookDeliverySchema,
  WebhookEndpoint as WebhookEndpointSchema,
  WebhookEndpointWithSecret as WebhookEndpointWithSecretSchema,
} from "../routes/webhooks-schemas.ts";
import type { Workspace as WorkspaceSchema } from "../routes/workspaces.ts";

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
export type Queue = Static<typeof QueueSchema>;
export type Destination = Static<typeof DestinationSchema>;
export type DestinationConnection = Static<typeof Connection>;
export type Workspace = Static<typeof WorkspaceSchema>;
export type Asset = Static<typeof AssetSchema>;
export type AssetUpload = Static<typeof AssetUploadSchema>;
export type Billing = Static<typeof BillingSchema>;
export type BillingSession = Static<ReturnType<typeof HostedSession>>;
export type Member = Static<typeof MemberSchema>;
export type Invitation = Static<typeof InvitationSchema>;
export type WebhookEndpoint = Static<typeof WebhookEndpointSchema>;
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecretSchema>;
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;
export type GroupAnalytics = Static<typeof GroupAnalyticsSchema>;
export type AnalyticsSeries = Static<typeof Series>;
