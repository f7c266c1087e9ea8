/** The longest comment (a rejection's reason, a reviewer's words, a team note). */
export const COMMENT_MAX = 5000;
/** How long a review link lives unless told otherwise, and at least and at most (days). */
export const REVIEW_LINK_DAYS = { default: 30, min: 1, max: 30 } as const;
/** The longest reviewer name kept. */
export const REVIEWER_NAME_MAX = 100;
