import { etagOf } from "../core/etag.ts";

/** A JSON response for one resource, with its ETag. */
export function resourceResponse(
  resource: unknown,
  status = 200,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(resource), {
    status,
    headers: { "content-type": "application/json", etag: etagOf(resource), ...headers },
  });
}
