/**
 * Requests the MCP endpoint hands to the API in-process (each tool is one call of an API operation).
 * Only this process can put a Request in the set, so a client cannot claim a dispatch with a header:
 * authentication uses it to accept credentials whose audience is the MCP resource alone.
 */
const dispatched = new WeakSet<Request>();

/** Marks a request built by the MCP endpoint for an in-process call of the API; returns it. */
export function markMcpDispatch(request: Request): Request {
  dispatched.add(request);
  return request;
}

/** Whether the MCP endpoint built this request for an in-process call of the API. */
export function isMcpDispatch(request: Request): boolean {
  return dispatched.has(request);
}
