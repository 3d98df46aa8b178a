/**
 * Migration 0039 on SQLite: projects that exist before it get their issue board, with its backlog and done lists (new
 * projects get theirs at creation: test/api/boards.test.ts). The PostgreSQL file runs the same statements.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { knownMigrations } from '../../daemon/db/connection.js';

describe('migration 0039', () => {
  it('gives every existing project a board with a backlog and a done list, and nothing else', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    const migrations = knownMigrations();
    for (const m of migrations.filter((x) => x.version < 39)) db.exec(m.sql);
    const t = '2026-01-01T00:00:00.000Z';
    const ns = db.prepare(`INSERT INTO namespaces (name, path, kind, created_at, updated_at) VALUES ('g', 'g', 'group', ?, ?) RETURNING id`).get(t, t) as { id: number };
    const project = db.prepare(`INSERT INTO projects (name, path, namespace_id, runners_token_salt, runners_token_hash, last_activity_at, created_at, updated_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`);
    const ids = ['a', 'b'].map((p) => (project.get(p, p, ns.id, `salt-${p}`, `hash-${p}`, t, t, t) as { id: number }).id);
    db.exec(migrations.find((x) => x.version === 39)!.sql);
    const boards = db.prepare(`SELECT id, project_id, created_at FROM boards ORDER BY project_id`).all() as { id: number; project_id: number; created_at: string }[];
    expect(boards.map((b) => b.project_id)).toEqual(ids);
    expect(boards.every((b) => b.created_at === t)).toBe(true);
    for (const b of boards) {
      expect(db.prepare(`SELECT list_type, label_id, position FROM board_lists WHERE board_id = ? ORDER BY list_type`).all(b.id)).toEqual([
        { list_type: 'backlog', label_id: null, position: null }, { list_type: 'done', label_id: null, position: null },
      ]);
    }
    // one board per project: a second is refused by the unique index
    expect(() => db.prepare(`INSERT INTO boards (project_id, created_at, updated_at) VALUES (?, ?, ?)`).run(ids[0], t, t)).toThrow(/UNIQUE/);
    // a project's deletion takes its board and lists
    db.prepare(`DELETE FROM projects WHERE id = ?`).run(ids[0]);
    expect((db.prepare(`SELECT COUNT(*) AS n FROM board_lists`).get() as { n: number }).n).toBe(2);
    db.close();
  });
});
