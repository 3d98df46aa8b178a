/** OAuth errors in RFC 6749's form (`error` code + `error_description`), turned into bodies or redirects by daemon/oauth/. */

/** RFC 6749 error codes Gantry answers. */
export type OAuthErrorCode =
  | 'invalid_request' | 'invalid_client' | 'invalid_grant' | 'unauthorized_client' | 'unsupported_grant_type'
  | 'invalid_scope' | 'access_denied' | 'unsupported_response_type' | 'invalid_token';

/** An OAuth error: code, a description that says what to do next, and the HTTP status of a direct answer. */
export class OAuthError extends Error {
  constructor(
    public readonly error: OAuthErrorCode,
    public readonly description: string,
    public readonly status: 400 | 401 | 403 | 413 | 429 = error === 'invalid_client' || error === 'invalid_token' ? 401 : 400,
  ) {
    super(`${error}: ${description}`);
  }
}

/** Shorthand for `new OAuthError(...)`. */
export const oauthError = (error: OAuthErrorCode, description: string, status?: 400 | 401 | 403 | 413 | 429) => new OAuthError(error, description, status);
