import { etagOfJson } from "../core/etag.ts";

/** A JSON response for one resource, with its ETag. */
export function resourceResponse(
  resource: unknown,
  status = 200,
  headers: Record<string, string> = {},
): Response {
  const json = JSON.stringify(resource);
  return new Response(json, {
    status,
    headers: { "content-type": "application/json", etag: headers.etag ?? etagOfJson(json), ...headers },
  });
}
