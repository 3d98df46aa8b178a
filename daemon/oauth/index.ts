/**
 * /oauth: the OAuth 2 provider (authorization code grant with sign-in and consent pages, password and refresh-token
 * grants, revocation, token info) and the one stylesheet of its pages. Loading it installs the bearer-token
 * resolver of the API and the `oauth2:<token>` credential of git over HTTP.
 */
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { daemonAsset } from '../assets.js';
import { registerGitCredentialResolver } from '../git-http/auth.js';
import { setBearerResolver, userForOauthToken } from '../policy/authentication.js';
import { peekAccessToken, resolveAccessToken } from '../services/oauth/index.js';
import authorizeRoutes from './authorize.js';
import tokenRoutes from './token.js';

setBearerResolver(resolveAccessToken, peekAccessToken);
// git over HTTP as GitLab: username `oauth2`, password an access token.
registerGitCredentialResolver(async (ctx, username, password) => {
  if (username !== 'oauth2') return undefined;
  const user = await userForOauthToken(ctx, password);
  return user ? { user } : undefined;
});

let css: string | undefined;

/** Registers /oauth/* (mounted with the /oauth prefix; all on the data layer: served on SQLite and PostgreSQL). */
export default async function oauthRoutes(app: FastifyInstance): Promise<void> {
  await app.register(tokenRoutes);
  await app.register(authorizeRoutes);
  app.get('/assets/oauth.css', { schema: { hide: true } }, async (_request, reply) => {
    css ??= readFileSync(daemonAsset('oauth/oauth.css'), 'utf8');
    return reply.header('content-type', 'text/css; charset=utf-8').header('cache-control', 'public, max-age=3600').send(css);
  });
}
