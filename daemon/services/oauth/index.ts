/** The OAuth 2 provider's domain: applications, codes and tokens, browser sessions. */
export * from './applications.js';
export * from './errors.js';
export * from './scopes.js';
export * from './sessions.js';
export * from './tokens.js';
export type { OauthApplicationRow } from '../../db/schema-oauth.js';
