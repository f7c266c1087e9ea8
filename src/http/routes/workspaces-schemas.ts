import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed, Nullable } from "./common-schemas.ts";

const UTM_HELP = "added to the redirect unless the URL already has this parameter";

/** A workspace's link tracking: short links and the UTM parameters their redirects add. */
export const LinkTracking = t.Object(
  {
    enabled: t.Boolean({
      description: "URLs in bodies of posts created from now on are published as <base>/l/{code}",
    }),
    utm_source: Nullable(t.String({ description: `utm_source, ${UTM_HELP}` })),
    utm_medium: Nullable(t.String({ description: `utm_medium, ${UTM_HELP}` })),
    utm_campaign: Nullable(t.String({ description: `utm_campaign, ${UTM_HELP}` })),
  },
  { title: "LinkTracking" },
);

const UtmValue = Nullable(
  t.String({ minLength: 1, maxLength: 100, description: "1 to 100 characters; null removes the preset" }),
);

/** The link_tracking part of PATCH: the fields sent replace the stored ones, the others stay. */
const LinkTrackingPatch = Closed(
  {
    enabled: t.Optional(t.Boolean()),
    utm_source: t.Optional(UtmValue),
    utm_medium: t.Optional(UtmValue),
    utm_campaign: t.Optional(UtmValue),
  },
  { title: "LinkTrackingUpdate", minProperties: 1 },
);

/** A workspace: its name and time zone. */
export const Workspace = t.Object(
  {
    id: t.String(),
    object: t.Literal("workspace"),
    name: t.String(),
    time_zone: t.String(),
    approval_required: t.Boolean({
      description: "Posts that would publish or schedule wait for a holder of posts:approve",
    }),
    link_tracking: LinkTracking,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Workspace" },
);
const Name = t.String({
  minLength: 1,
  maxLength: 200,
  pattern: "\\S",
  description: "1 to 200 characters, not only spaces",
});
const TimeZone = t.String({ minLength: 1, maxLength: 64, description: "IANA time zone name" });
/** Query of the workspace listing (its limit documented). */
export const ListWorkspacesQuery = t.Object({
  limit: t.Optional(t.String({ description: "1 to 100, default 25" })),
  after: t.Optional(t.String()),
});

/** Body of POST /workspaces. */
export const CreateWorkspaceBody = Closed(
  { name: Name, time_zone: t.Optional(TimeZone) },
  { title: "CreateWorkspaceRequest", examples: [{ name: "Marketing", time_zone: "Europe/Berlin" }] },
);

/** Body of PATCH one workspace. */
export const PatchWorkspaceBody = Closed(
  {
    name: t.Optional(Name),
    time_zone: t.Optional(TimeZone),
    approval_required: t.Optional(
      t.Boolean({ description: "Changing it also needs the posts:approve scope" }),
    ),
    link_tracking: t.Optional(LinkTrackingPatch),
  },
  {
    title: "UpdateWorkspaceRequest",
    minProperties: 1,
    examples: [
      { time_zone: "America/New_York" },
      { approval_required: true },
      {
        link_tracking: { enabled: true, utm_source: "herald", utm_medium: "social", utm_campaign: "launch" },
      },
    ],
  },
);
