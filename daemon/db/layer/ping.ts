/** The health probes' round trip to the database (GET /-/health, /-/readiness): rejects when it does not answer. */
import type { Queries } from './types.js';

export async function pingDatabase(q: Queries): Promise<void> {
  await q.get('SELECT 1 AS ok');
}
