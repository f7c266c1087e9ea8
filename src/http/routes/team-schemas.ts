import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed } from "./common-schemas.ts";

/** A person's role in the account. */
export const Role = t.Union([t.Literal("owner"), t.Literal("admin"), t.Literal("member")]);

/** An invitation not yet accepted or revoked. */
export const Invitation = t.Object(
  {
    id: t.String({ pattern: "^[0-9]+$" }),
    object: t.Literal("account_invitation"),
    email: t.String(),
    role: Role,
    status: t.Union([t.Literal("pending"), t.Literal("expired")]),
    created_at: Timestamp,
    expires_at: Timestamp,
    delivery: t.Object({ status: t.String(), requested_at: Timestamp }, { title: "InvitationDelivery" }),
    invitation_url: t.Optional(
      t.String({
        format: "uri",
        description:
          "Only in the answer of creating or resending an invitation, and only while the server sends " +
          "no mail: the one-time link to pass on to the invited person. Herald keeps only its hash, so " +
          "it is shown once (an idempotent replay leaves it out).",
      }),
    ),
  },
  { title: "AccountInvitation" },
);

export const RevokedInvitation = t.Object(
  {
    id: t.String({ pattern: "^[0-9]+$" }),
    object: t.Literal("account_invitation"),
    email: t.String(),
    revoked: t.Literal(true),
  },
  { title: "RevokedAccountInvitation" },
);

export const InvitationParams = t.Object({ invitation_id: t.String() });

/** Body of POST /account/invitations. */
export const InviteBody = Closed(
  { email: t.String({ format: "email", maxLength: 254 }), role: t.Optional(Role) },
  { title: "CreateAccountInvitationRequest", examples: [{ email: "sam@example.com", role: "member" }] },
);

/** A person of the account. */
export const Member = t.Object(
  {
    id: t.String(),
    object: t.Literal("account_member"),
    email: t.String(),
    name: t.Union([t.String(), t.Null()]),
    role: Role,
    created_at: Timestamp,
  },
  { title: "AccountMember" },
);

export const RemovedMember = t.Object(
  {
    id: t.String(),
    object: t.Literal("account_member"),
    email: t.String(),
    removed: t.Literal(true),
    revoked_key_ids: t.Array(t.String()),
  },
  { title: "RemovedAccountMember" },
);

export const MemberParams = t.Object({ member_id: t.String() });

/** Body of removing a member: `confirmation` is the member's e-mail address. */
export const RemoveMemberBody = Closed(
  { confirmed: t.Literal(true), confirmation: t.String({ maxLength: 254 }) },
  { title: "RemoveAccountMemberRequest", examples: [{ confirmed: true, confirmation: "sam@example.com" }] },
);
