import type Stripe from "stripe";
import { ProblemError } from "../../core/problem.ts";
import type { Herald } from "../../herald.ts";

export type { Stripe };

// One client per Herald value; the package is loaded only once billing is used (start-up stays lean).
const clients = new WeakMap<Herald, Promise<Stripe>>();

/**
 * The official Stripe client for the configured secret key, pointed at HERALD_STRIPE_API_BASE (host,
 * port and protocol), so tests reach the local fake through the same code that reaches Stripe.
 */
export function stripeOf(h: Herald): Promise<Stripe> {
  let client = clients.get(h);
  if (!client) {
    client = import("stripe").then(({ default: StripeClient }) => {
      const base = new URL(h.config.billing.stripeApiBase);
      const protocol = base.protocol === "http:" ? "http" : "https";
      return new StripeClient(h.config.billing.stripeSecretKey ?? "", {
        host: base.hostname,
        port: base.port === "" ? (protocol === "http" ? 80 : 443) : Number(base.port),
        protocol,
        maxNetworkRetries: 2,
        timeout: 20_000,
        appInfo: { name: "Herald", version: h.version },
      });
    });
    clients.set(h, client);
  }
  return client;
}

/**
 * Runs one Stripe call; a failure becomes 502 `public_provider_error` naming what was attempted.
 * Stripe refusing the request (a price id that does not exist, a key without the permission) is an
 * operator's configuration error and not worth repeating; a network failure or a 5xx is.
 */
export async function callStripe<T>(
  h: Herald,
  what: string,
  call: (stripe: Stripe) => Promise<T>,
): Promise<T> {
  const stripe = await stripeOf(h);
  try {
    return await call(stripe);
  } catch (error) {
    const failure = error as { type?: string; message?: string; statusCode?: number; requestId?: string };
    const refused =
      typeof failure.statusCode === "number" && failure.statusCode < 500 && failure.statusCode !== 429;
    h.logger.warn("stripe call failed", {
      operation: what,
      type: failure.type ?? "unknown",
      status: failure.statusCode ?? null,
      stripe_request_id: failure.requestId ?? null,
      message: failure.message ?? String(error),
    });
    const detail = refused
      ? `Stripe refused to ${what}: ${failure.message ?? "no reason given"}. ` +
        "The server's billing settings need attention."
      : `Stripe could not be reached to ${what}; try again shortly.`;
    throw new ProblemError("public_provider_error", detail, {
      retrySafety: refused ? "not_retryable" : "safe",
      retryAfter: refused ? undefined : 5,
    });
  }
}
