// Calls to Meta's Graph API on graph.facebook.com, shared by Facebook Pages and Instagram (connected
// through Facebook Login, so it lives on the same host): the API version, one call helper that sends
// the token as the documented `access_token` parameter, and what every Graph id answer looks like.
import { metaGraphCall, type MetaAnswer } from "../meta/graph.ts";
import { ProviderError, type ProviderDeps } from "../types.ts";

/** The Graph API version Herald calls (released February 2026, available until July 2028). */
export const META_GRAPH_VERSION = "v25.0";

/** An origin without trailing slashes. */
export function baseOf(origin: string): string {
  return origin.replace(/\/+$/, "");
}

/**
 * One Graph call on `origin`: the token goes as `access_token` (query for reads, form body for
 * writes; a multipart `form` carries it as a field). `path` is below the version, e.g. `me/accounts`.
 */
export function graphCall(input: {
  deps: ProviderDeps;
  origin: string;
  method: "GET" | "POST";
  path: string;
  params?: Record<string, string>;
  /** A multipart body (photo bytes) instead of form-encoded params; POST only. */
  form?: FormData;
  token: string;
  operation: string;
  idempotent: boolean;
}): Promise<MetaAnswer> {
  const url = new URL(`${baseOf(input.origin)}/${META_GRAPH_VERSION}/${input.path}`);
  const params = { ...input.params, access_token: input.token };
  let init: RequestInit = {};
  if (input.method === "GET") {
    for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  } else if (input.form) {
    for (const [key, value] of Object.entries(params)) input.form.set(key, value);
    init = { method: "POST", body: input.form };
  } else {
    init = {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(params),
    };
  }
  return metaGraphCall({
    deps: input.deps,
    operation: input.operation,
    url: String(url),
    init,
    idempotent: input.idempotent,
  });
}

/** The `id` of a Graph answer as a string; `transient` (idempotent call) or `outcome_unknown` without one. */
export function idOf(body: Record<string, any>, key: string, operation: string, idempotent: boolean): string {
  const value = body[key];
  if (typeof value === "string" && value !== "") return value;
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  throw new ProviderError(
    idempotent ? "transient" : "outcome_unknown",
    `${operation}: the answer has no ${key}`,
    { operation },
  );
}

/** Graph times are ISO 8601 with a `+0000` offset; NaN when unreadable. */
export function parseGraphTime(value: unknown): number {
  if (typeof value !== "string") return Number.NaN;
  return Date.parse(value.replace(/([+-]\d\d)(\d\d)$/, "$1:$2"));
}

/** Waits `ms` between two inline status polls. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A Graph insights answer (`{data: [{name, period, values: [{value}]}]}`, or `total_value: {value}`) as
 * name → value (a number, or an object for the `*_by_type` metrics); metrics without a value are left out.
 */
export function insightValues(body: Record<string, any>): Map<string, unknown> {
  const insights = new Map<string, unknown>();
  for (const entry of Array.isArray(body.data) ? body.data : []) {
    const raw =
      entry?.total_value?.value ?? (Array.isArray(entry?.values) ? entry.values[0]?.value : undefined);
    if (typeof entry?.name === "string" && raw !== undefined && raw !== null) insights.set(entry.name, raw);
  }
  return insights;
}

/** A count Graph reported: a finite number ≥ 0, else null. */
export function graphCount(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : null;
}
