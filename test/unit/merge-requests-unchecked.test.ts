/**
 * A push marks the open merge requests of its branch unchecked (db/merge-requests.ts uncheckMergeRequestsOfBranch):
 * only rows still checked are written, and SQLite finds them through the partial indexes of migration 0040 instead of
 * walking every open merge request of the branch (10 ms of every merge into a branch with 26,000 of them).
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { knownMigrations } from '../../daemon/db/connection.js';
import { uncheckMergeRequestsOfBranch } from '../../daemon/db/merge-requests.js';
import type { Queries } from '../../daemon/db/layer/types.js';
import { sqliteDialect } from '../../daemon/db/layer/sqlite.js';

function database() {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = OFF');
  for (const m of knownMigrations()) db.exec(m.sql);
  return db;
}

/** The statements uncheckMergeRequestsOfBranch runs, run on `db` (and their texts). */
function recorder(db: Database.Database) {
  const texts: string[] = [];
  const tx = {
    dialect: sqliteDialect,
    run: async (sql: string, args: unknown[]) => {
      texts.push(sql);
      const r = db.prepare(sql).run(...args);
      return { changes: r.changes, lastInsertRowid: Number(r.lastInsertRowid) };
    },
  } as unknown as Queries;
  return { tx, texts };
}

describe('unchecking the merge requests of a pushed branch', () => {
  it('finds the rows through the partial indexes of migration 0040', async () => {
    const db = database();
    const { tx, texts } = recorder(db);
    await uncheckMergeRequestsOfBranch(tx, 1, 'master');
    expect(texts).toHaveLength(2);
    const plans = texts.map((t) => (db.prepare(`EXPLAIN QUERY PLAN ${t}`).all(1, 'master') as { detail: string }[]).map((r) => r.detail).join(' ; '));
    expect(plans[0]).toMatch(/USING INDEX merge_requests_checked_source \(/);
    expect(plans[1]).toMatch(/USING INDEX merge_requests_checked_target \(/);
  });

  it('unchecks the open ones of either side, leaves closed, merged, deleted and already unchecked rows alone', async () => {
    const db = database();
    const t = '2026-01-01T00:00:00.000Z';
    const ins = db.prepare(`INSERT INTO merge_requests (target_project_id, iid, source_project_id, source_branch, target_branch, title, state, merge_status,
      author_id, created_at, updated_at, deleted_at) VALUES (1, ?, ?, ?, ?, 't', ?, ?, 1, ?, ?, ?)`);
    const rows = [
      ['into master', 1, 'feature', 'master', 'opened', 'can_be_merged', null],
      ['from master', 1, 'master', 'stable', 'reopened', 'cannot_be_merged', null],
      ['other branch', 1, 'x', 'y', 'opened', 'can_be_merged', null],
      ['other project', 2, 'master', 'z', 'opened', 'can_be_merged', null],
      ['closed', 1, 'f2', 'master', 'closed', 'can_be_merged', null],
      ['merged', 1, 'f3', 'master', 'merged', 'can_be_merged', null],
      ['deleted', 1, 'f4', 'master', 'opened', 'can_be_merged', t],
      ['unchecked', 1, 'f5', 'master', 'opened', 'unchecked', null],
    ] as const;
    rows.forEach(([, source, branch, target, state, status, deleted], i) => ins.run(i + 1, source, branch, target, state, status, t, t, deleted));
    await uncheckMergeRequestsOfBranch(recorder(db).tx, 1, 'master');
    const after = db.prepare(`SELECT iid, merge_status, merge_status_version AS v FROM merge_requests ORDER BY iid`).all() as { iid: number; merge_status: string; v: number }[];
    expect(after.map((r) => [rows[r.iid - 1]![0], r.merge_status, r.v])).toEqual([
      ['into master', 'unchecked', 1], ['from master', 'unchecked', 1], ['other branch', 'can_be_merged', 0], ['other project', 'can_be_merged', 0],
      ['closed', 'can_be_merged', 0], ['merged', 'can_be_merged', 0], ['deleted', 'can_be_merged', 0], ['unchecked', 'unchecked', 0],
    ]);
  });
});
