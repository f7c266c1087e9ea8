import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed } from "./common-schemas.ts";

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
  },
  {
    title: "UpdateWorkspaceRequest",
    minProperties: 1,
    examples: [{ time_zone: "America/New_York" }, { approval_required: true }],
  },
);
