/** Route helpers shared by the repository routes (files, commits, branches, tags, tree). */
import type { FastifyRequest } from 'fastify';

/**
 * preValidation hook: write params may arrive in the query string (GitLab merged query, form and JSON params); copy
 * the query's keys into the body where the body lacks them, so one body schema validates both.
 */
export async function mergeQueryParams(request: FastifyRequest): Promise<void> {
  const body = request.body;
  const query = request.query as Record<string, unknown> | undefined;
  if (!query || typeof query !== 'object') return;
  if (body === undefined || body === null) {
    request.body = { ...query };
    return;
  }
  if (typeof body !== 'object' || Buffer.isBuffer(body) || Array.isArray(body)) return;
  const b = body as Record<string, unknown>;
  for (const [k, v] of Object.entries(query)) if (!(k in b) && k !== 'private_token') b[k] = v;
}

/** The `*` part of a wildcard route (a branch or tag name, which may contain `/`), decoded once. */
export function wildcardOf(request: FastifyRequest): string {
  return (request.params as Record<string, string>)['*'] ?? '';
}
