/** Every post state of the contract. */
export const POST_STATES = [
  "draft",
  "preparing",
  "scheduled",
  "ready",
  "processing",
  "awaiting-provider",
  "published",
  "failed",
  "needs-attention",
  "cancelled",
  "missed",
] as const;

/** A post's state. */
export type PostState = (typeof POST_STATES)[number];

/** Things a caller may do to a post (DESIGN.md's set). */
export type PostAction = "update" | "publish" | "delete" | "cancel" | "reschedule" | "move" | "retry";

const TERMINAL: PostState[] = ["published", "cancelled", "failed"];
const ACTION_REQUIRED: PostState[] = ["needs-attention", "missed"];

/** States that finish a post's life (nothing more will happen by itself). */
export function isTerminal(state: PostState): boolean {
  return TERMINAL.includes(state);
}

/** States where the user must decide (reauthorize, retry an unknown outcome, reschedule). */
export function isActionRequired(state: PostState): boolean {
  return ACTION_REQUIRED.includes(state);
}

/**
 * What the caller may do now, derived from the state (and queue placement for `move`). A published
 * post whose first comment failed (`last_error.code` first_comment_failed) may retry the comment.
 */
export function availableActions(
  state: PostState,
  scheduleMode: string,
  lastErrorCode: string | null = null,
): PostAction[] {
  switch (state) {
    case "published":
      return lastErrorCode === "first_comment_failed" ? ["retry"] : [];
    case "draft":
      return ["update", "publish", "delete"];
    case "preparing":
      return ["cancel"];
    case "scheduled":
      return scheduleMode === "queue" ? ["cancel", "reschedule", "move"] : ["cancel", "reschedule"];
    case "ready":
      return ["cancel", "reschedule"];
    case "failed":
      return ["retry", "reschedule"];
    case "needs-attention":
      return ["retry", "reschedule", "cancel"];
    case "missed":
      return ["retry", "reschedule", "cancel"];
    default:
      return [];
  }
}

/** The listing views of the contract and the states each groups (attention = failed, as DESIGN.md says). */
export const VIEWS: Record<string, PostState[] | null> = {
  all: null,
  drafts: ["draft"],
  scheduled: ["preparing", "scheduled", "ready", "processing", "awaiting-provider"],
  published: ["published"],
  attention: ["failed", "needs-attention", "missed"],
  failed: ["failed", "needs-attention", "missed"],
};

/** Posts still owned by the engine or waiting on the user (they hold queue slots and destinations). */
export const LIVE_STATES: PostState[] = [
  "preparing",
  "scheduled",
  "ready",
  "processing",
  "awaiting-provider",
  "needs-attention",
  "missed",
];
