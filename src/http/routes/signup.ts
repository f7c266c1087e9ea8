import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, requestIdOf, type ClientAddress, type heraldPlugin } from "../plugin.ts";
import {
  createCliAuthorization,
  exchangeDeviceSecret,
  presentCliAuthorizationStart,
} from "../../modules/cli-auth/service.ts";
import { signupStartLimiter } from "../../modules/signup/limiter.ts";
import { createSignupIntent, presentSignupIntent, requireSignupOpen } from "../../modules/signup/service.ts";
import {
  CliAuthorizationBody,
  CliAuthorizationPending,
  CliAuthorizationStart,
  CliCredential,
  DeviceSecretBody,
  SignupIntent,
  SignupIntentBody,
} from "./signup-schemas.ts";
import { publicHandler } from "./context.ts";

// One-time credentials: never kept by a cache (RFC 6749 §5.1 asks the same of token responses).
const NO_STORE = { "cache-control": "no-store" };

async function startSignup(h: Herald, { body }: { body: Static<typeof SignupIntentBody> }) {
  const created = await createSignupIntent(h, body);
  return resourceResponse(presentSignupIntent(h, created), 201, NO_STORE);
}

async function startCliAuthorization(h: Herald, { body }: { body: Static<typeof CliAuthorizationBody> }) {
  const started = await createCliAuthorization(h, body);
  return resourceResponse(presentCliAuthorizationStart(h, started), 201, NO_STORE);
}

/** 202 with Retry-After while pending; 200 with the key once approved. */
async function exchangeSecret(
  h: Herald,
  { body, request }: { body: Static<typeof DeviceSecretBody>; request: Request },
) {
  const answer = await exchangeDeviceSecret(h, {
    deviceSecret: body.device_secret,
    requestId: requestIdOf(request),
  });
  if (answer.status === "pending")
    return resourceResponse(answer, 202, { ...NO_STORE, "retry-after": String(answer.retry_after) });
  return resourceResponse(answer, 200, NO_STORE);
}

const tag = "Signup and CLI authorization";
const doc = {
  signup: operation({
    scope: null,
    operationId: "createSignupIntent",
    summary: "Start a signup (no auth): a one-time signup page, and optionally a CLI authorization",
    tag,
    errors: [403, 409, 429],
    description:
      "403 `public_signup_closed` when the server's signup is closed; 409 `public_conflict` on " +
      "`/email` when the address has an account; 429 `public_rate_limited` past the per-address " +
      "limit. `device_name` is required with `authorize_cli: true`; the attached " +
      "`cli_authorization` is approved when the signup page is completed.",
  }),
  cli: operation({
    scope: null,
    operationId: "createCliAuthorization",
    summary: "Start a CLI authorization (no auth): a device secret to poll with and a code to approve",
    tag,
    errors: [429],
    description:
      "Open `verification_uri_complete` in a browser (or show `verification_uri` and the code), " +
      "then poll `POST /cli-authorizations/token` every `interval` seconds.",
  }),
  token: operation({
    scope: null,
    operationId: "exchangeCliAuthorization",
    summary: "Exchange a device secret (no auth): pending until approved, then the CLI's API key once",
    tag,
    errors: [403, 404, 409, 429],
    description:
      "202 with the pending shape and `Retry-After` while nobody has approved (or the approver's " +
      "address awaits confirmation); 200 with the `cli_credential` once approved, its `api_key` " +
      "shown this once. Problems: 429 `public_rate_limited` when polled sooner than `interval` " +
      "(the interval grows by 5 s; wait `Retry-After`), 403 `public_cli_authorization_denied`, " +
      "409 `public_cli_authorization_expired`, 409 `public_cli_authorization_consumed` (the secret " +
      "works once), 404 `public_not_found` for an unknown secret.",
  }),
};

/**
 * The three operations without bearer auth (the contract's browser handoff): signup intents, CLI
 * authorizations and their token exchange. Starting either is limited per client address
 * (HERALD_SIGNUP_REQUESTS_PER_HOUR), before the body is validated.
 */
export function signupRoutes(
  h: Herald,
  rails: ReturnType<typeof heraldPlugin>,
  clientAddress: ClientAddress,
) {
  const starts = signupStartLimiter(h);
  const countStart = ({ request }: { request: Request }) => starts.hit(clientAddress(request), h.clock.now());
  // The rails bring the size-limited JSON parser; these routes declare no `scope`, so nothing authenticates.
  return new Elysia()
    .use(rails)
    .post("/signup-intents", publicHandler(h, startSignup), {
      ...doc.signup,
      parse: JSON_PARSER,
      async transform({ request }) {
        await requireSignupOpen(h);
        countStart({ request });
      },
      body: SignupIntentBody,
      response: { 201: SignupIntent },
    })
    .post("/cli-authorizations", publicHandler(h, startCliAuthorization), {
      ...doc.cli,
      parse: JSON_PARSER,
      transform: countStart,
      body: CliAuthorizationBody,
      response: { 201: CliAuthorizationStart },
    })
    .post("/cli-authorizations/token", publicHandler(h, exchangeSecret), {
      ...doc.token,
      parse: JSON_PARSER,
      body: DeviceSecretBody,
      response: { 200: CliCredential, 202: CliAuthorizationPending },
    });
}
