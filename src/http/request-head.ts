import { invalid, ProblemError } from "../core/problem.ts";

/**
 * The request target plus every header line must fit in 16 KiB, Bun's and Node's default. Bun's
 * own limit is raised above it (see `NATIVE_HEADER_LIMIT_BYTES`) so that this one answers first,
 * with a problem.
 */
export const MAX_REQUEST_HEAD_BYTES = 16_384;

/** What Bun itself accepts before answering a bare 431 on its own; a backstop far above the limit. */
export const NATIVE_HEADER_LIMIT_BYTES = 256 * 1024;

// A module-level counter and callback: no closure is made per request (the count is synchronous).
let headBytes = 0;
const countHeader = (value: string, name: string) => {
  headBytes += name.length + value.length + 4;
};

/** 431 when the URL and headers of a request are larger than `MAX_REQUEST_HEAD_BYTES`. */
export function checkRequestHead(request: Request): void {
  headBytes = request.url.length;
  request.headers.forEach(countHeader);
  if (headBytes <= MAX_REQUEST_HEAD_BYTES) return;
  const detail = `The URL and headers take ${headBytes} bytes; at most ${MAX_REQUEST_HEAD_BYTES} are taken.`;
  throw new ProblemError("public_request_header_too_large", detail);
}

/** 400 naming the first query parameter sent more than once (none of the API's takes a list). */
export function checkQueryRepeats(url: string): void {
  const start = url.indexOf("?");
  if (start === -1 || start === url.length - 1) return;
  const seen = new Set<string>();
  for (const name of new URLSearchParams(url.slice(start + 1)).keys()) {
    if (seen.has(name)) {
      throw invalid(`/${name.replace(/~/g, "~0").replace(/\//g, "~1")}`, "is repeated; send it once", name);
    }
    seen.add(name);
  }
}
