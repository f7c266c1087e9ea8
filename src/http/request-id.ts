import { newId } from "../db/ids.ts";

const VISIBLE_ASCII = /^[\x21-\x7e]{1,128}$/;

/** The caller's Service-Request-Id when valid (1–128 visible ASCII characters), else a new `req_…`. */
export function requestIdFor(header: string | null): string {
  return header !== null && VISIBLE_ASCII.test(header) ? header : newId("req");
}
