import type { Static } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { Herald } from "../../herald.ts";
import { operation } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { submitFeedback } from "../../modules/feedback/service.ts";
import type { RouteContext } from "./context.ts";
import { Feedback, FeedbackBody } from "./feedback-schemas.ts";
import { handler } from "./context.ts";

function sendFeedback(h: Herald, { actor, request, body }: RouteContext<Static<typeof FeedbackBody>>) {
  return runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
    resourceResponse(await submitFeedback({ h, actor, message: body.message }), 201),
  );
}

const doc = {
  send: operation({
    scope: "feedback:write",
    operationId: "submitFeedback",
    summary: "Send feedback to the server's operator (e-mailed to HERALD_FEEDBACK_TO)",
    tag: "Feedback",
    errors: [503],
    idempotency: "optional",
    description:
      "`message`: 1 to 10,000 characters. 503 public_unavailable (retryable) when the e-mail " +
      "cannot be sent; the message is stored all the same.",
  }),
};

/** POST /feedback: a message to the operator, e-mailed at once. */
export function feedbackRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia().use(rails).post("/feedback", handler(h, sendFeedback), {
    ...doc.send,
    parse: JSON_PARSER,
    body: FeedbackBody,
    response: { 201: Feedback },
  });
}
