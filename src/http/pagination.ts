import type { Herald } from "../herald.ts";
import { invalid } from "../core/problem.ts";

/** A page request after validation: `afterId` is the last id of the previous page. */
export interface PageRequest {
  limit: number;
  afterId: string | null;
}

const CURSOR_PURPOSE = "listing-cursor";

/**
 * Validates `limit` (1–100, default 25) and `after`. A cursor is only valid for the listing
 * (`scope`: the listing name, its owner and its filters) that issued it; anything else is a 400.
 */
export function parsePageQuery(
  h: Herald,
  query: Record<string, string | undefined>,
  scope: string,
): PageRequest {
  let limit = 25;
  if (query.limit !== undefined) {
    if (!/^\d{1,3}$/.test(query.limit) || Number(query.limit) < 1 || Number(query.limit) > 100) {
      throw invalid("/limit", "must be an integer from 1 to 100", "limit");
    }
    limit = Number(query.limit);
  }
  let afterId: string | null = null;
  if (query.after !== undefined) afterId = decodeCursor(h, query.after, scope);
  return { limit, afterId };
}

function decodeCursor(h: Herald, cursor: string, scope: string): string {
  const bad = () =>
    invalid("/after", "is not a cursor issued by this listing; send next_cursor unchanged", "after");
  const [payload, signature] = cursor.split(".");
  if (!payload || !signature || !h.secrets.verify(CURSOR_PURPOSE, payload, signature)) throw bad();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(payload, "base64url").toString("utf8"));
  } catch {
    throw bad();
  }
  const { s, k } = (decoded ?? {}) as { s?: unknown; k?: unknown };
  if (s !== scope || typeof k !== "string") throw bad();
  return k;
}

function encodeCursor(h: Herald, scope: string, lastId: string): string {
  const payload = Buffer.from(JSON.stringify({ s: scope, k: lastId })).toString("base64url");
  return `${payload}.${h.secrets.sign(CURSOR_PURPOSE, payload)}`;
}

/**
 * Builds `{data, has_more, next_cursor}` from `limit + 1` fetched rows (newest first by id) and the
 * `Link: rel="next"` header exactly when another page exists.
 */
export function pageResponse<Row extends { id: string }, Out>(
  h: Herald,
  request: Request,
  rows: Row[],
  page: PageRequest,
  scope: string,
  present: (row: Row) => Out,
): Response {
  const hasMore = rows.length > page.limit;
  const pageRows = hasMore ? rows.slice(0, page.limit) : rows;
  const nextCursor = hasMore ? encodeCursor(h, scope, pageRows[pageRows.length - 1]!.id) : null;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (nextCursor) {
    const url = new URL(request.url);
    const next = new URL(h.config.baseUrl + url.pathname);
    for (const [k, v] of url.searchParams) if (k !== "after") next.searchParams.append(k, v);
    next.searchParams.set("after", nextCursor);
    headers.link = `<${next.toString()}>; rel="next"`;
  }
  return new Response(
    JSON.stringify({ data: pageRows.map(present), has_more: hasMore, next_cursor: nextCursor }),
    { status: 200, headers },
  );
}

/** A whole listing in one page (destinations): `has_more` false, `next_cursor` null. */
export function wholeListing<T>(data: T[]): { data: T[]; has_more: false; next_cursor: null } {
  return { data, has_more: false, next_cursor: null };
}
