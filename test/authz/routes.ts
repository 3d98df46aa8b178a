/**
 * Every route of the app, as `METHOD /path/{param}` keys: the OpenAPI document's operations plus whatever the router
 * holds outside it (hidden routes: git over HTTP, uploads, /oauth, /-/...), read from Fastify's route tree.
 */
import type { FastifyInstance } from 'fastify';

/** `:name` -> `{name}`, a trailing `*` -> `{*}`, so router and OpenAPI paths compare. */
export const normalize = (path: string) => path.replace(/:(\w+)/g, '{$1}').replace(/\/?\*$/, '/{*}');

/** The (method, path) pairs of Fastify's printRoutes tree (HEAD left out: Fastify adds it to every GET). */
export function parseRouteTree(tree: string): string[] {
  const out: string[] = [];
  const stack: string[] = [];
  for (const line of tree.split('\n')) {
    const m = line.match(/^((?:[│ ] {3})*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/u);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    stack.length = depth;
    const full = stack.join('') + m[2]!;
    stack.push(m[2]!);
    for (const method of (m[3] ?? '').split(', ').filter((x) => x && x !== 'HEAD')) out.push(`${method} ${normalize(full === '*' ? '/*' : full)}`);
  }
  return out;
}

/** Every route of the app (sorted, no duplicates). */
export async function routeKeys(app: FastifyInstance): Promise<string[]> {
  const doc = (await app.inject({ method: 'GET', url: '/api/v3/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
  const keys = new Set<string>();
  for (const [path, ops] of Object.entries(doc.paths)) for (const method of Object.keys(ops)) keys.add(`${method.toUpperCase()} ${path}`);
  for (const key of parseRouteTree(app.printRoutes({ commonPrefix: false }))) keys.add(key);
  return [...keys].sort();
}

/** The routes no row of the table names. */
export function unmatchedRoutes(routes: string[], rows: { method: string; path: string }[]): string[] {
  const covered = new Set(rows.map((r) => `${r.method} ${normalize(r.path)}`));
  return routes.filter((k) => !covered.has(k));
}
