import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed } from "./common-schemas.ts";

export const CliAuthorizationStart = t.Object(
  {
    object: t.Literal("cli_authorization"),
    sensitive: t.Literal(true),
    device_secret: t.String({ minLength: 32, maxLength: 200 }),
    verification_uri: t.String({ format: "uri" }),
    verification_uri_complete: t.String({ format: "uri" }),
    expires_at: Timestamp,
    // TypeBox's own integer: Elysia's t.Integer documents a numeric-string alternative too.
    interval: Type.Integer({ minimum: 1 }),
  },
  { title: "CliAuthorizationStart" },
);

export const SignupIntent = t.Object(
  {
    object: t.Literal("signup_intent"),
    signup_url: t.String({ format: "uri" }),
    expires_at: Timestamp,
    cli_authorization: t.Optional(CliAuthorizationStart),
  },
  { title: "SignupIntent" },
);

export const CliAuthorizationPending = t.Object(
  {
    object: t.Literal("cli_authorization"),
    status: t.Literal("pending"),
    retry_after: Type.Integer({ minimum: 1 }),
    expires_at: Timestamp,
  },
  { title: "CliAuthorizationPending" },
);

export const CliCredential = t.Object(
  {
    object: t.Literal("cli_credential"),
    status: t.Literal("authorized"),
    api_key: t.String(),
    workspace_id: t.String(),
    workspace_name: t.String(),
    account_id: t.String(),
  },
  { title: "CliCredential" },
);

const DeviceName = t.String({ minLength: 1, maxLength: 200 });
const CliVersion = t.String({ minLength: 1, maxLength: 100 });

/** Body of POST /signup-intents. */
export const SignupIntentBody = Closed(
  {
    email: t.String({ format: "email", maxLength: 254 }),
    workspace_name: t.String({ minLength: 1, maxLength: 200 }),
    authorize_cli: t.Optional(t.Boolean({ default: false })),
    device_name: t.Optional(DeviceName),
    cli_version: t.Optional(CliVersion),
  },
  {
    title: "CreateSignupIntentRequest",
    examples: [{ email: "ada@example.com", workspace_name: "Ada's posts" }],
  },
);

/** Body of POST /cli-authorizations. */
export const CliAuthorizationBody = Closed(
  { device_name: DeviceName, cli_version: t.Optional(CliVersion) },
  { title: "CreateCliAuthorizationRequest", examples: [{ device_name: "laptop", cli_version: "1.0.0" }] },
);

/** Body of POST /cli-authorizations/token. */
export const DeviceSecretBody = Closed(
  { device_secret: t.String({ minLength: 32, maxLength: 200 }) },
  {
    title: "ExchangeCliAuthorizationRequest",
    examples: [{ device_secret: "hds_8Kq2vX5mN9pR3tW7yZ1bC4fH6jL0sD2g" }],
  },
);
