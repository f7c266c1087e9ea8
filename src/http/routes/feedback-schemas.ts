import { t } from "elysia";
import { Timestamp } from "../docs.ts";
import { Closed } from "./common-schemas.ts";

/** A stored message to the operator. */
export const Feedback = t.Object(
  { object: t.Literal("feedback"), id: t.String(), created_at: Timestamp },
  { title: "Feedback" },
);

/** Body of POST /feedback; the length is checked in code points by the module (400 at /message). */
export const FeedbackBody = Closed(
  {
    message: t.String({
      description: "1 to 10,000 characters (Unicode code points), not only white space",
    }),
  },
  {
    title: "SubmitFeedbackRequest",
    examples: [{ message: "The calendar would help me more if it started on Sunday." }],
  },
);
