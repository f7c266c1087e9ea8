import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed, Deleted } from "./common-schemas.ts";
import { CHANNELS } from "../../providers/types.ts";

/** A connected account the workspace publishes to. */
export const Destination = t.Object(
  {
    id: t.String(),
    object: t.Literal("destination"),
    channel: t.String(),
    display_name: t.String(),
    status: t.Union([t.Literal("ready"), t.Literal("unavailable"), t.Literal("disabled")]),
    unavailable_reason: t.Optional(t.String()),
    is_default: t.Boolean(),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Destination" },
);
/** A connection session (Bluesky at once, OAuth networks through the authorization URL). */
export const DestinationConnection = t.Object(
  {
    object: t.Literal("destination_connection"),
    id: t.String(),
    provider: t.String(),
    status: t.Union([
      t.Literal("pending"),
      t.Literal("completed"),
      t.Literal("failed"),
      t.Literal("expired"),
    ]),
    authorization_url: t.Union([t.String(), t.Null()]),
    destination_id: t.Union([t.String(), t.Null()]),
    error: t.Union([t.String(), t.Null()]),
    expires_at: Timestamp,
  },
  { title: "DestinationConnection" },
);
export const DestinationParams = t.Object({ workspace_id: t.String(), destination_id: t.String() });
export const ConnectionParams = t.Object({ workspace_id: t.String(), connection_id: t.String() });

/** Query of the destination listing: generic paginators send these; the listing is always whole. */
export const ListDestinationsQuery = t.Object({
  limit: t.Optional(t.String({ description: "accepted and ignored: the listing is whole" })),
  after: t.Optional(t.String({ description: "accepted and ignored" })),
});

/** Body of PATCH one destination. */
export const PatchDestinationBody = Closed(
  { enabled: t.Optional(t.Boolean()), is_default: t.Optional(t.Boolean()) },
  { title: "UpdateDestinationRequest", minProperties: 1, examples: [{ is_default: true }] },
);

/** The answer of DELETE one destination. */
export const DeletedDestination = Deleted("destination");

/**
 * Body of POST /destination-connections; `provider` is one of `channels`: the networks of the registry
 * Herald was built with (the contract's nine unless `openHerald` was given others, docs/networks.md).
 */
export const startConnectionBody = (channels: readonly string[]) =>
  Closed(
    {
      provider: t.Union(channels.map((c) => t.Literal(c))),
      instance_origin: t.Optional(t.String({ minLength: 1, maxLength: 2048 })),
      handle: t.Optional(t.String({ minLength: 1, maxLength: 253 })),
      app_password: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    },
    // A network connected by OAuth: the answer holds the authorization URL to open.
    {
      title: "CreateDestinationConnectionRequest",
      examples: [{ provider: "mastodon", instance_origin: "https://mastodon.social" }],
    },
  );

/** Body of POST /destination-connections over the contract's channels. */
export const StartConnectionBody = startConnectionBody(CHANNELS);
