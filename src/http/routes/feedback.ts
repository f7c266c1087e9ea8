import { Elysia, t } from "elysia";
import type { Herald } from "../../herald.ts";
import { operation, Timestamp } from "../docs.ts";
import { resourceResponse } from "../etag.ts";
import { JSON_PARSER, type heraldPlugin } from "../plugin.ts";
import { runIdempotent } from "../../modules/idempotency/service.ts";
import { submitFeedback } from "../../modules/feedback/service.ts";

const Feedback = t.Object(
  { object: t.Literal("feedback"), id: t.String(), created_at: Timestamp },
  { title: "Feedback" },
);

/** POST /feedback: a message to the operator, e-mailed at once. */
export function feedbackRoutes(h: Herald, rails: ReturnType<typeof heraldPlugin>) {
  return new Elysia()
    .use(rails)
    .post(
      "/feedback",
      ({ actor, request, body }) =>
        runIdempotent(h, { accountId: actor.accountId, request, body, required: false }, async () =>
          resourceResponse(await submitFeedback({ h, actor, message: body.message }), 201),
        ),
      {
        ...operation({
          scope: "feedback:write",
          summary: "Send feedback to the server's operator (e-mailed to HERALD_FEEDBACK_TO)",
          tag: "Feedback",
          errors: [503],
          idempotency: "optional",
          description:
            "`message`: 1 to 10,000 characters. 503 public_unavailable (retryable) when the e-mail " +
            "cannot be sent; the message is stored all the same.",
        }),
        parse: JSON_PARSER,
        // The length is checked in code points by the module (400 at /message), not by the schema.
        body: t.Object(
          {
            message: t.String({
              description: "1 to 10,000 characters (Unicode code points), not only white space",
            }),
          },
          { additionalProperties: false },
        ),
        response: { 201: Feedback },
      },
    );
}
