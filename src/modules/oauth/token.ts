import type { Herald } from "../../herald.ts";
import { safeEqual } from "../../lib/crypto.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { Db } from "../../db/open.ts";
import { pkceChallenge } from "../../providers/pkce.ts";
import { recordAudit } from "../audit/repo.ts";
import { insertApiKey, markApiKeyRevoked } from "../keys/repo.ts";
import { KEY_PREFIX_LENGTH } from "../keys/service.ts";
import { hashToken } from "../sessions/tokens.ts";
import { newGrantId } from "./authorize.ts";
import { resolveClient } from "./client-registry.ts";
import { OauthError } from "./errors.ts";
import { mcpResourceUrl } from "./metadata.ts";
import {
  consumeAuthorizationCode,
  findAuthorizationCode,
  findRefreshToken,
  insertRefreshToken,
  replaceGrantAccessToken,
  rotateRefreshToken,
} from "./repo.ts";
import { ACCESS_TOKEN_TTL_MS, GRANT_TTL_MS, newAccessToken, newRefreshToken } from "./tokens.ts";

/** The token endpoint's answer (RFC 6749 §5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  refresh_token: string;
  scope: string;
}

/** What went wrong after the answer was decided: a reused code or refresh token revokes its grant. */
type Revocation = { grantId: string; accountId: string; reason: "code" | "refresh_token" };

/**
 * `POST /oauth/token`: exchanges an authorization code (with its PKCE verifier) or a refresh token
 * for an access token and the next refresh token. Errors are `OauthError`s in RFC 6749 form.
 */
export async function exchangeToken(
  h: Herald,
  form: URLSearchParams,
  requestId: string,
): Promise<TokenResponse> {
  const grantType = form.get("grant_type");
  if (!grantType) throw new OauthError("invalid_request", "grant_type is required.");
  for (const name of new Set(form.keys()))
    if (form.getAll(name).length > 1) throw new OauthError("invalid_request", `${name} is repeated.`);
  if (grantType === "authorization_code") return exchangeCode(h, form, requestId);
  if (grantType === "refresh_token") return refresh(h, form, requestId);
  throw new OauthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token.");
}

function required(form: URLSearchParams, name: string): string {
  const value = form.get(name);
  if (!value) throw new OauthError("invalid_request", `${name} is required.`);
  return value;
}

async function knownClient(h: Herald, form: URLSearchParams) {
  const client = await resolveClient(h, required(form, "client_id"));
  if (!client) throw new OauthError("invalid_client", "The client is not registered.", 401);
  return client;
}

function checkResource(h: Herald, form: URLSearchParams): void {
  const resource = form.get("resource");
  if (resource !== null && resource !== mcpResourceUrl(h))
    throw new OauthError("invalid_target", `resource must be ${mcpResourceUrl(h)}.`);
}

async function exchangeCode(h: Herald, form: URLSearchParams, requestId: string): Promise<TokenResponse> {
  const code = required(form, "code");
  const verifier = required(form, "code_verifier");
  const redirectUri = required(form, "redirect_uri");
  const client = await knownClient(h, form);
  checkResource(h, form);
  const codeHash = hashToken(code);
  const now = h.clock.now();
  let revoke: Revocation | null = null;
  const answer = await inTransaction(h.db, async (tx) => {
    revoke = null;
    const row = await findAuthorizationCode(tx, codeHash);
    const invalid = (why: string) => new OauthError("invalid_grant", why);
    if (!row || row.clientId !== client.id) throw invalid("The authorization code is not valid.");
    if (row.usedAt !== null) {
      // A code used twice was stolen or replayed: the grant it made ends too (RFC 6749 §4.1.2).
      if (row.grantId) revoke = { grantId: row.grantId, accountId: row.accountId, reason: "code" };
      throw invalid("The authorization code was already used.");
    }
    if (row.expiresAt <= now) throw invalid("The authorization code has expired.");
    if (row.redirectUri !== redirectUri) throw invalid("redirect_uri is not the one the code was issued to.");
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !safeEqual(pkceChallenge(verifier), row.codeChallenge))
      throw invalid("code_verifier does not match the code_challenge.");
    if (row.resource !== null && form.get("resource") !== null && form.get("resource") !== row.resource)
      throw new OauthError("invalid_target", "resource is not the one the code was issued for.");
    const grantId = newGrantId();
    if (!(await consumeAuthorizationCode(tx, codeHash, grantId, now)))
      throw invalid("The authorization code was already used.");
    const access = newAccessToken();
    const refreshToken = newRefreshToken();
    const expiresAt = now + GRANT_TTL_MS;
    const accessExpiresAt = Math.min(now + ACCESS_TOKEN_TTL_MS, expiresAt);
    await insertApiKey(
      tx,
      {
        id: grantId,
        accountId: row.accountId,
        name: client.clientName,
        prefix: access.token.slice(0, KEY_PREFIX_LENGTH),
        secretHash: access.hash,
        environment: "live",
        scopes: row.scopes,
        workspaceAccessMode: row.workspaceAccessMode,
        expiresAt,
        createdAt: now,
        createdByUserId: row.userId,
        kind: "oauth_grant",
        oauthClientId: client.id,
        accessExpiresAt,
      },
      row.workspaceAccessMode === "selected" ? row.workspaceIds : [],
    );
    await insertRefreshToken(tx, refreshToken.hash, grantId, now);
    await recordAudit(
      tx,
      { accountId: row.accountId, credentialId: grantId, requestId },
      { action: "oauth_grant.created", targetType: "oauth_grant", targetId: grantId },
      now,
    );
    return tokenResponse(access.token, refreshToken.token, accessExpiresAt - now, row.scopes);
  }).catch(async (error) => {
    if (revoke) await revokeGrant(h, revoke, requestId);
    throw error;
  });
  return answer;
}

async function refresh(h: Herald, form: URLSearchParams, requestId: string): Promise<TokenResponse> {
  const token = required(form, "refresh_token");
  const client = await knownClient(h, form);
  checkResource(h, form);
  const tokenHash = hashToken(token);
  const now = h.clock.now();
  let revoke: Revocation | null = null;
  return inTransaction(h.db, async (tx) => {
    revoke = null;
    const found = await findRefreshToken(tx, tokenHash);
    const invalid = (why: string) => new OauthError("invalid_grant", why);
    if (!found || found.grant.oauthClientId !== client.id) throw invalid("The refresh token is not valid.");
    const { grant } = found;
    if (grant.revokedAt !== null) throw invalid("The grant has been revoked.");
    if (grant.expiresAt !== null && grant.expiresAt <= now)
      throw invalid("The grant has expired; authorize again.");
    // A rotated token used again was copied: whoever holds the grant now may not be its client.
    if (found.token.rotatedAt !== null || !(await rotateRefreshToken(tx, tokenHash, now))) {
      revoke = { grantId: grant.id, accountId: grant.accountId, reason: "refresh_token" };
      throw invalid("The refresh token was already used; the grant is revoked.");
    }
    const scope = form.get("scope");
    const beyond = (scope ?? "").split(" ").filter((s) => s && !grant.scopes.includes(s));
    if (beyond.length > 0)
      throw new OauthError("invalid_scope", `The grant does not hold ${beyond.join(", ")}.`);
    const access = newAccessToken();
    const next = newRefreshToken();
    const accessExpiresAt = Math.min(now + ACCESS_TOKEN_TTL_MS, grant.expiresAt ?? Number.MAX_SAFE_INTEGER);
    await replaceGrantAccessToken(tx, grant.id, {
      secretHash: access.hash,
      prefix: access.token.slice(0, KEY_PREFIX_LENGTH),
      accessExpiresAt,
    });
    await insertRefreshToken(tx, next.hash, grant.id, now);
    return tokenResponse(access.token, next.token, accessExpiresAt - now, grant.scopes);
  }).catch(async (error) => {
    if (revoke) await revokeGrant(h, revoke, requestId);
    throw error;
  });
}

/** Ends a grant whose code or refresh token was used twice, with an audit record naming the grant. */
async function revokeGrant(h: Herald, revoke: Revocation, requestId: string): Promise<void> {
  const now = h.clock.now();
  await inTransaction(h.db, async (tx: Db) => {
    await markApiKeyRevoked(tx, revoke.grantId, now);
    await recordAudit(
      tx,
      { accountId: revoke.accountId, credentialId: revoke.grantId, requestId },
      {
        action: `oauth_grant.revoked_on_${revoke.reason}_reuse`,
        targetType: "oauth_grant",
        targetId: revoke.grantId,
      },
      now,
    );
  });
}

function tokenResponse(
  access: string,
  refreshToken: string,
  lifetimeMs: number,
  scopes: string[],
): TokenResponse {
  return {
    access_token: access,
    token_type: "Bearer",
    expires_in: Math.floor(lifetimeMs / 1000),
    refresh_token: refreshToken,
    scope: scopes.join(" "),
  };
}
