// Meta Graph API conventions for the fakes of Threads (and later Instagram and Facebook): the error
// envelope, the X-Business-Use-Case-Usage header of throttled calls, and the default failure bodies.
import { json } from "./shared.ts";

/** The fields of one Graph error as the fakes write them. */
export interface GraphErrorSpec {
  message: string;
  code: number;
  subcode?: number;
  type?: string;
  isTransient?: boolean;
}

let traces = 0;
/** A trace id like Meta's `fbtrace_id`. */
export function fbtrace(): string {
  return `Atr${(++traces).toString(36).padStart(8, "0")}`;
}

/** `{"error":{message,type,code,error_subcode?,is_transient?,fbtrace_id}}`. */
export function graphErrorBody(spec: GraphErrorSpec): Record<string, unknown> {
  return {
    error: {
      message: spec.message,
      type: spec.type ?? "OAuthException",
      code: spec.code,
      ...(spec.subcode !== undefined ? { error_subcode: spec.subcode } : {}),
      ...(spec.isTransient !== undefined ? { is_transient: spec.isTransient } : {}),
      fbtrace_id: fbtrace(),
    },
  };
}

/** A Graph error response. */
export function graphError(
  status: number,
  spec: GraphErrorSpec,
  headers: Record<string, string> = {},
): Response {
  return json(graphErrorBody(spec), status, headers);
}

/** X-Business-Use-Case-Usage saying the app may call again in `minutes`. */
export function bucHeader(minutes: number, id = "17841400000000000"): Record<string, string> {
  return {
    "x-business-use-case-usage": JSON.stringify({
      [id]: [
        {
          type: "threads",
          call_count: 100,
          total_cputime: 25,
          total_time: 25,
          estimated_time_to_regain_access: minutes,
        },
      ],
    }),
  };
}

/** The token error Meta answers for an expired or invalid token (code 190, subcode 463). */
export const EXPIRED_TOKEN: GraphErrorSpec = {
  message: "Error validating access token: Session has expired.",
  code: 190,
  subcode: 463,
};

/** Default bodies (and headers) of injected failures, by status, as Meta writes them. */
export function metaDefaultFailure(status: number): { body: unknown; headers?: Record<string, string> } {
  if (status === 401) return { body: graphErrorBody(EXPIRED_TOKEN) };
  if (status === 429)
    return {
      body: graphErrorBody({ message: "Application request limit reached", code: 4, isTransient: true }),
      headers: bucHeader(5),
    };
  if (status === 403)
    return {
      body: graphErrorBody({ message: "Application does not have permission for this action", code: 10 }),
    };
  if (status >= 500)
    return {
      body: graphErrorBody({
        message: "An unexpected error has occurred. Please retry your request later.",
        code: 2,
        isTransient: true,
      }),
    };
  return { body: graphErrorBody({ message: "Invalid parameter", code: 100 }) };
}

/**
 * One page of a Graph edge listing (newest first, as the caller sorted `items`) by `limit` (default
 * 25, at most 100) and the `after` cursor: `paging.cursors` always, `paging.next` only while more
 * remain, as Meta documents cursor-based pagination.
 */
export function graphPage<T>(
  items: T[],
  params: Record<string, string>,
  url: URL,
): { page: T[]; paging: Record<string, unknown> } {
  const limit = Math.min(100, Number(params.limit ?? 25) || 25);
  const decoded = params.after ? Number(Buffer.from(params.after, "base64url").toString()) : 0;
  const start = Number.isInteger(decoded) && decoded > 0 ? decoded : 0;
  const page = items.slice(start, start + limit);
  const cursor = (n: number) => Buffer.from(String(n)).toString("base64url");
  const cursors = { before: cursor(start), after: cursor(start + page.length) };
  if (start + page.length >= items.length) return { page, paging: { cursors } };
  const next = new URL(url);
  next.searchParams.set("after", cursors.after);
  return { page, paging: { cursors, next: String(next) } };
}
