// The command-line client's way to the API: one call with the key, problems as ApiError, and the
// workspace a command acts on.
import type { ClientConfig } from "../config.ts";
import { UsageError } from "./admin.ts";

/** A refusal from the API, shown as its problem detail. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null = null,
    readonly retryable = false,
  ) {
    super(message);
  }
}

/** Calls the API; problems become ApiError with their detail. */
export async function call(
  config: ClientConfig & { apiKey: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<any> {
  const response = await fetch(`${config.apiUrl}/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${config.apiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  }).catch((error: Error) => {
    throw new ApiError(0, `cannot reach Herald at ${config.apiUrl} (${error.message})`, null, true);
  });
  const text = await response.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    const fields = (parsed?.errors ?? [])
      .map((e: { pointer: string; detail: string }) => `${e.pointer || "(body)"} ${e.detail}`)
      .join("; ");
    throw new ApiError(
      response.status,
      `${parsed?.detail ?? `HTTP ${response.status}`}${fields && !parsed?.detail?.includes(fields) ? ` (${fields})` : ""}`,
      parsed?.code ?? null,
      parsed?.retryable === true,
    );
  }
  return parsed;
}

/** The workspace a command acts on: the flag, HERALD_WORKSPACE_ID, or the key's only workspace. */
export async function resolveWorkspace(
  config: ClientConfig & { apiKey: string },
  flag: string | undefined,
): Promise<string> {
  const chosen = flag ?? config.workspaceId;
  if (chosen) return chosen;
  const listing = await call(config, "GET", "/workspaces?limit=100");
  const ids: string[] = (listing?.data ?? []).map((w: { id: string }) => w.id);
  if (ids.length === 1) return ids[0]!;
  throw new UsageError(
    ids.length === 0
      ? "this API key can use no workspace"
      : `this API key can use ${ids.length} workspaces; choose one with --workspace or HERALD_WORKSPACE_ID`,
  );
}
