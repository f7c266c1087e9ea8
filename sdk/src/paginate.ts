import type { FetchOptions } from "openapi-fetch";
import type { HeraldClient } from "./client.ts";
import { HeraldApiError } from "./problem.ts";
import type { paths } from "./schema.ts";

/** A listing as the contract shapes it: a page of `data`, and the cursor of the next one. */
interface Listing {
  data: unknown[];
  has_more: boolean;
  next_cursor: string | null;
}

type GetOperation<P> = P extends { get: infer Operation } ? Operation : never;
type JsonOk<Operation> = Operation extends {
  responses: { 200: { content: { "application/json": infer Body } } };
}
  ? Body
  : never;

/** The paths whose GET answers a listing. */
export type ListingPath = {
  [P in keyof paths]: JsonOk<GetOperation<paths[P]>> extends Listing ? P : never;
}[keyof paths];

/** An item of a listing path. */
export type ListingItem<P extends ListingPath> = JsonOk<GetOperation<paths[P]>> extends {
  data: (infer Item)[];
}
  ? Item
  : never;

type ListingInit<P extends ListingPath> = FetchOptions<GetOperation<paths[P]>>;
/** `init` may be left out when the path needs no parameters (`/workspaces`). */
type ListingInitParameter<P extends ListingPath> = {} extends ListingInit<P>
  ? [init?: ListingInit<P>]
  : [init: ListingInit<P>];

/**
 * Every item of a listing, page after page: each page is asked for with the previous page's
 * `next_cursor` as `after` (sent unchanged, as the contract says) until `has_more` is false.
 * `init` is what `client.GET(path, init)` takes; its `query.limit` sets the page size. An error answer
 * throws HeraldApiError.
 */
export async function* paginate<P extends ListingPath>(
  client: HeraldClient,
  path: P,
  ...[init]: ListingInitParameter<P>
): AsyncGenerator<ListingItem<P>, void, undefined> {
  const get = client.GET as unknown as (
    path: string,
    init: unknown,
  ) => Promise<{ data?: Listing; error?: unknown; response: Response }>;
  const params = (init as { params?: { query?: Record<string, unknown> } } | undefined)?.params ?? {};
  let after: string | null = null;
  do {
    const query = after === null ? params.query : { ...params.query, after };
    const { data, error, response } = await get(path, { ...init, params: { ...params, query } });
    if (data === undefined) throw new HeraldApiError(response, error);
    for (const item of data.data) yield item as ListingItem<P>;
    after = data.has_more ? data.next_cursor : null;
  } while (after !== null);
}
