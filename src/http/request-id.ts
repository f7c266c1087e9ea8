import { newId } from "../db/ids.ts";

const VISIBLE_ASCII = /^[\x21-\x7e]{1,128}$/;

/** The caller's Service-Request-Id when valid (1–128 visible ASCII characters), else null. */
export function clientRequestIdFrom(header: string | null): string | null {
  return header !== null && VISIBLE_ASCII.test(header) ? header : null;
}

/** Herald's own id of a request (what its audit records and logs name), whatever the caller sent. */
export function newRequestId(): string {
  return newId("req");
}
