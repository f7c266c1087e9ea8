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

/**
 * 400 when the URL holds a percent-encoded NUL (`%00`): no id or value of the API contains one, and
 * PostgreSQL text cannot hold it (such an id reached the database and failed with a 500 before).
 */
export function checkNoNul(url: string): void {
  const at = url.indexOf("%00");
  if (at === -1) return;
  const query = url.indexOf("?");
  let parameter: string | undefined;
  if (query !== -1 && at > query)
    for (const [name, value] of new URLSearchParams(url.slice(query + 1)))
      if (name.includes("\0") || value.includes("\0")) {
        parameter = name;
        break;
      }
  const detail = "must not hold a NUL character (%00)";
  throw new ProblemError(
    "public_invalid_request",
    `The ${parameter ? "query" : "path"} holds a NUL character.`,
    {
      errors: [
        {
          pointer: parameter === undefined ? "" : `/${parameter}`,
          code: "custom",
          detail,
          ...(parameter === undefined ? {} : { parameter }),
        },
      ],
    },
  );
}
