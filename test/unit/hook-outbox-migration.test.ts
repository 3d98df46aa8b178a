/**
 * Migration 0038 on SQLite rebuilds hook_deliveries (hook_id nullable, a system hook or a service as the other
 * targets): the rows of an existing installation keep their ids, values and hooks, the AUTOINCREMENT high-water mark is
 * kept (a delivery's Idempotency-Key derives from its id, so an id must never be handed out twice), deleting a hook
 * still takes its deliveries, and a row must name exactly one target.
 */
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { knownMigrations } from '../../daemon/db/connection.js';

function migrate(db: Database.Database, upTo: (version: number) => boolean): void {
  for (const m of knownMigrations()) if (upTo(m.version)) db.transaction(() => db.exec(m.sql))();
}

describe('migration 0038 (hook_deliveries rebuilt)', () => {
  it('keeps rows, ids, the sequence and the cascade; refuses rows without exactly one target', () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    migrate(db, (v) => v < 38);
    const t = '2026-01-01T00:00:00.000Z';
    db.prepare("INSERT INTO users (id, email, username, name, password_hash, private_token_salt, private_token_hash, created_at, updated_at) VALUES (1, 'a@x', 'a', 'a', 'h', 's', 't', ?, ?)").run(t, t);
    db.prepare("INSERT INTO namespaces (id, name, path, kind, owner_id, created_at, updated_at) VALUES (1, 'a', 'a', 'user', 1, ?, ?)").run(t, t);
    db.prepare("INSERT INTO projects (id, name, path, namespace_id, runners_token_salt, runners_token_hash, created_at, updated_at, last_activity_at) VALUES (1, 'p', 'p', 1, 's', 'h', ?, ?, ?)").run(t, t, t);
    db.prepare("INSERT INTO project_hooks (id, project_id, url, created_at) VALUES (5, 1, 'http://x.test/h', ?)").run(t);
    const insert = db.prepare("INSERT INTO hook_deliveries (hook_id, event, payload, status, attempts, next_attempt_at, created_at) VALUES (5, ?, ?, ?, ?, ?, ?)");
    for (let i = 0; i < 4; i++) insert.run('push', `{"n":${i}}`, i === 0 ? 'delivered' : 'pending', i, t, t);
    db.prepare('DELETE FROM hook_deliveries WHERE id = 4').run(); // the newest row pruned: its id must stay used
    const before = db.prepare('SELECT * FROM hook_deliveries ORDER BY id').all();

    migrate(db, (v) => v === 38);
    const after = db.prepare('SELECT id, hook_id, event, payload, status, attempts, next_attempt_at, locked_at, last_status_code, last_error, created_at, delivered_at FROM hook_deliveries ORDER BY id').all();
    expect(after).toEqual(before);
    expect(db.prepare('SELECT system_hook_id, service_id FROM hook_deliveries').all()).toEqual(before.map(() => ({ system_hook_id: null, service_id: null })));
    const next = db.prepare("INSERT INTO hook_deliveries (hook_id, event, payload, next_attempt_at, created_at) VALUES (5, 'push', '{}', ?, ?) RETURNING id").get(t, t) as { id: number };
    expect(next.id).toBe(5);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name LIKE 'hook_deliveries%' ORDER BY name").all().map((r) => (r as { name: string }).name)).toEqual([
      'hook_deliveries', 'hook_deliveries_due', 'hook_deliveries_hook', 'hook_deliveries_service', 'hook_deliveries_system_hook',
    ]);

    db.prepare("INSERT INTO system_hooks (id, url, created_at) VALUES (1, 'http://x.test/s', ?)").run(t);
    expect(() => db.prepare("INSERT INTO hook_deliveries (event, payload, next_attempt_at, created_at) VALUES ('x', '{}', ?, ?)").run(t, t)).toThrow(/CHECK constraint/);
    expect(() => db.prepare("INSERT INTO hook_deliveries (hook_id, system_hook_id, event, payload, next_attempt_at, created_at) VALUES (5, 1, 'x', '{}', ?, ?)").run(t, t)).toThrow(/CHECK constraint/);
    db.prepare("INSERT INTO hook_deliveries (system_hook_id, event, payload, next_attempt_at, created_at) VALUES (1, 'user_create', '{}', ?, ?)").run(t, t);
    db.prepare('DELETE FROM project_hooks WHERE id = 5').run();
    db.prepare('DELETE FROM system_hooks WHERE id = 1').run();
    expect(db.prepare('SELECT COUNT(*) AS n FROM hook_deliveries').get()).toEqual({ n: 0 });
    expect(db.pragma('foreign_key_check')).toEqual([]);
    db.close();
  });
});
