import type { ApiAnswer } from "./mcp/tools.ts";

/**
 * An API answer read whole for an MCP tool (JSON parsed; any other body as null). A module of its own,
 * outside src/http/mcp/, which /mcp loads only on its first request.
 */
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
