// What an OAuth refresh grant needs before it is sent, for the networks connected through Herald's own
// app (X, TikTok, YouTube): the app's id and secret, and the refresh token the destination stores.
import { ProviderError, type Credentials, type NetworkApp } from "./types.ts";

/** An app's client as the settings hold it: either half may be missing. */
type AppClient = Pick<NetworkApp, "clientId" | "clientSecret">;

/** An app with both halves of its client set. */
export type ConfiguredApp<A extends AppClient> = A & { clientId: string; clientSecret: string };

/**
 * The app a refresh grant is sent with. Without its id or secret nothing is sent (`not_sent`): the
 * token is not dead, Herald is not configured (HERALD_<CH>_CLIENT_ID and _SECRET name the variables).
 */
export function appForRenewal<A extends AppClient>(input: {
  app: A | undefined;
  channel: string;
  displayName: string;
  operation: string;
}): ConfiguredApp<A> {
  const { app, operation } = input;
  if (!app?.clientId || !app.clientSecret) {
    const ch = input.channel.toUpperCase();
    throw new ProviderError(
      "not_sent",
      `${input.displayName} tokens cannot be renewed: HERALD_${ch}_CLIENT_ID and HERALD_${ch}_CLIENT_SECRET are not set`,
      { operation },
    );
  }
  return app as ConfiguredApp<A>;
}

/** The destination's refresh token; a destination without one cannot be renewed (`auth_revoked`). */
export function storedRefreshToken(input: {
  credentials: Credentials;
  displayName: string;
  operation: string;
}): string {
  const refreshToken = input.credentials.refreshToken;
  if (typeof refreshToken !== "string" || refreshToken === "")
    throw new ProviderError("auth_revoked", `the ${input.displayName} destination has no refresh token`, {
      operation: input.operation,
    });
  return refreshToken;
}
