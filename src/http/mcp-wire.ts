// How an MCP tool's API call goes on the wire and how its answer is read, for both transports (/mcp
// in-process, `herald mcp` over HTTP). A module of its own, outside src/http/mcp/, which /mcp loads
// only on its first request.
import type { ApiAnswer, ApiRequest } from "./mcp/tools.ts";

/**
 * The Request of a tool's API call under `apiBase` (`<origin>/v1`), with the transport's own headers
 * (the credential, …) and the call's body, Idempotency-Key and If-Match.
 */
export function apiRequestOf(apiBase: string, call: ApiRequest, headers: Record<string, string>): Request {
  const all: Record<string, string> = { accept: "application/json", ...headers };
  if (call.body !== undefined) all["content-type"] = "application/json";
  if (call.idempotencyKey !== undefined) all["idempotency-key"] = call.idempotencyKey;
  if (call.ifMatch !== undefined) all["if-match"] = call.ifMatch;
  const query = call.query && Object.keys(call.query).length > 0 ? `?${new URLSearchParams(call.query)}` : "";
  return new Request(`${apiBase}${call.path}${query}`, {
    method: call.method,
    headers: all,
    body: call.body === undefined ? undefined : JSON.stringify(call.body),
  });
}

/** An API answer read whole for an MCP tool (JSON parsed; any other body as null). */
export async function answerOf(response: Response): Promise<ApiAnswer> {
  const text = await response.text();
  let body: unknown = null;
  if (text !== "" && /json/.test(response.headers.get("content-type") ?? ""))
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
  return { status: response.status, headers: response.headers, body };
}
