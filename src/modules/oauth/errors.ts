/**
 * An error of the OAuth endpoints, answered in the form OAuth clients parse (RFC 6749 §5.2, RFC 7591
 * §3.2.2): `{error, error_description}` with a status, never problem+json.
 */
export class OauthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
  ) {
    super(description);
  }
}
