import type { ProviderError } from "../../providers/types.ts";

/** Automatic retries of transient failures before a post is `failed`. */
export const MAX_AUTOMATIC_RETRIES = 6;

// Delays before automatic retry n (1-based): the first within 30 s, then growing to hours.
const RETRY_DELAYS_MS = [15_000, 60_000, 4 * 60_000, 15 * 60_000, 60 * 60_000, 3 * 60 * 60_000];

/** Delay before automatic retry `n` (1-based), with ±20 % jitter so retries of many posts spread out. */
export function retryDelayMs(n: number, random: () => number = Math.random): number {
  const base = RETRY_DELAYS_MS[Math.min(n, RETRY_DELAYS_MS.length) - 1]!;
  return Math.round(base * (0.8 + 0.4 * random()));
}

/** The `last_error` object of a post (and `error` of an attempt). */
export interface PostError {
  code: string;
  message: string;
  retryable: boolean;
  retry_safety: "safe" | "unsafe" | "not_retryable";
  user_action: string;
}

/** The post error a provider failure becomes. */
export function postErrorFrom(error: ProviderError): PostError {
  switch (error.kind) {
    case "transient":
      return {
        code: "provider_unavailable",
        message: error.message,
        retryable: true,
        retry_safety: "safe",
        user_action: "retry",
      };
    case "auth_expired":
    case "auth_revoked":
      return {
        code: "destination_reauthorization_required",
        message: error.message,
        retryable: true,
        retry_safety: "safe",
        user_action: "reauthorize_destination",
      };
    case "rejected":
      return {
        code: "provider_rejected",
        message: error.message,
        retryable: false,
        retry_safety: "not_retryable",
        user_action: error.userAction ?? "edit_post",
      };
    case "blocked":
      return {
        code: "provider_address_blocked",
        message:
          `${error.message} Herald does not connect to private or reserved addresses; ` +
          "reconnect the destination at a public address.",
        retryable: false,
        retry_safety: "not_retryable",
        user_action: "reauthorize_destination",
      };
    case "misconfigured":
      return {
        code: "provider_configuration_error",
        message: error.message,
        retryable: true,
        retry_safety: "safe",
        user_action: "contact_operator",
      };
    case "not_sent":
      return {
        code: "publishing_not_started",
        message: error.message,
        retryable: true,
        retry_safety: "safe",
        user_action: "retry",
      };
    case "outcome_unknown":
      return {
        code: "provider_outcome_unknown",
        message: `${error.message} The post may or may not be on the network; check it before retrying.`,
        retryable: true,
        retry_safety: "unsafe",
        user_action: "inspect_resource",
      };
  }
}

/** The attempt's `provider` details from a failure. */
export function providerDetails(error: ProviderError) {
  return {
    operation: error.operation,
    request_id: error.requestId,
    status_code: error.statusCode,
    error_code: error.errorCode,
    subcode: error.subcode,
  };
}
