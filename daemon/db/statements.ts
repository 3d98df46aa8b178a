/** Prepared statements cached per database connection and SQL text, for hot paths (auth, policy, presenters, lists). */
import type Database from 'better-sqlite3';
import type { AppContext } from '../context.js';
import { dbStatementsOf, type Counter } from '../metrics.js';

const cache = new WeakMap<Database.Database, Map<string, Database.Statement>>();
/** Each call is counted as one statement run (callers run what they get once); the series appears on first use. */
let counted: Counter | undefined;

/** A prepared statement for `sql` on the context's connection, prepared once and reused. */
export function statement(ctx: Pick<AppContext, 'db'>, sql: string): Database.Statement {
  (counted ??= dbStatementsOf('sqlite')).value += 1;
  const client = ctx.db.$client;
  let byText = cache.get(client);
  if (!byText) cache.set(client, (byText = new Map()));
  let stmt = byText.get(sql);
  if (!stmt) {
    stmt = client.prepare(sql);
    // Texts are built from code, never from user input; the bound keeps a pathological caller from growing it.
    if (byText.size > 1000) byText.clear();
    byText.set(sql, stmt);
  }
  return stmt;
}
