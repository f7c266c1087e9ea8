import { invalid } from "../../core/problem.ts";
import type { PostFilter } from "./repo.ts";
import { parseWhen } from "./rules.ts";
import { VIEWS, type PostState } from "./states.ts";

/** The query of the post listing, as the contract names its parameters. */
export interface PostListingQuery {
  view?: string;
  state?: string;
  channel?: string;
  group?: string;
  destination_id?: string;
  created_after?: string;
  scheduled_before?: string;
  approval?: "requested" | "approved" | "changes_requested";
}

/**
 * The filter of a post listing: a state narrows the view, and must be one of the view's states
 * (422 otherwise); the time filters are exact times with a UTC offset.
 */
export function postListingFilter(query: PostListingQuery): PostFilter {
  const filter: PostFilter = {
    states: query.state ? [query.state as PostState] : VIEWS[query.view ?? "all"]!,
    channel: query.channel,
    group: query.group,
    destinationId: query.destination_id,
    createdAfter: timeFilter(query.created_after, "created_after"),
    scheduledBefore: timeFilter(query.scheduled_before, "scheduled_before"),
    approval: query.approval,
  };
  if (
    query.state &&
    query.view &&
    query.view !== "all" &&
    !VIEWS[query.view]!.includes(query.state as PostState)
  )
    throw invalid("/state", `is not part of view ${query.view}`, "state");
  return filter;
}

function timeFilter(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = parseWhen(value);
  if (!parsed || parsed.mode !== "exact")
    throw invalid(`/${name}`, "must be an ISO 8601 time with a UTC offset", name);
  return parsed.at;
}
