import { newSecretToken } from "../sessions/tokens.ts";

/** How long an authorization code may wait for its exchange. */
export const CODE_TTL_MS = 5 * 60 * 1000;
/** How long an access token works (a client refreshes it with its refresh token). */
export const ACCESS_TOKEN_TTL_MS = 60 * 60 * 1000;
/** How long a grant lasts from consent; refreshing never extends it (the person consents again). */
export const GRANT_TTL_MS = 90 * 24 * 60 * 60 * 1000;

/**
 * The secrets of the OAuth flow, recognisable by their prefix like keys (`hk_live_…`): an access token
 * `hk_oat_…`, a refresh token `hk_ort_…`, an authorization code `hk_oac_…`; 43 base62 characters
 * after it (256 bits). Only SHA-256 hashes are stored.
 */
export const newAccessToken = () => newSecretToken("hk_oat_");
export const newRefreshToken = () => newSecretToken("hk_ort_");
export const newAuthorizationCode = () => newSecretToken("hk_oac_");
