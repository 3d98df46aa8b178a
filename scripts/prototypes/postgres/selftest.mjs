#!/usr/bin/env node
/**
 * Checks of the prototype's SQLite executor (layer.mjs): a transaction commits as a whole and is seen by the reader,
 * a throw rolls it back, a transaction that awaits something other than the database is refused and rolled back,
 * and a synchronous write started by other code while transactions run never lands inside one.
 *   node scripts/prototypes/postgres/selftest.mjs
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteLayer } from './layer.mjs';

const dir = mkdtempSync(join(tmpdir(), 'gantry-layer-'));
const db = openSqliteLayer(join(dir, 'db'));
db.raw.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, tx INTEGER, v TEXT)');
const count = async (where = '1') => (await db.get(`SELECT COUNT(*) AS n FROM t WHERE ${where}`)).n;

await db.transaction(async (tx) => {
  await tx.run('INSERT INTO t (tx, v) VALUES (?, ?)', [1, 'a']);
  await tx.run('INSERT INTO t (tx, v) VALUES (?, ?)', [1, 'b']);
});
assert.equal(await count('tx = 1'), 2, 'committed rows are seen by the reader connection');

await assert.rejects(db.transaction(async (tx) => {
  await tx.run('INSERT INTO t (tx, v) VALUES (?, ?)', [2, 'a']);
  throw new Error('validation failed');
}), /validation failed/);
assert.equal(await count('tx = 2'), 0, 'a throw rolls back');

let late;
await assert.rejects(db.transaction(async (tx) => {
  await tx.run('INSERT INTO t (tx, v) VALUES (?, ?)', [3, 'a']);
  await new Promise((r) => setTimeout(r, 5)); // git, the network, a timer: not allowed inside
  late = tx.run('INSERT INTO t (tx, v) VALUES (?, ?)', [3, 'b']).catch((e) => e.message);
}), /awaited something other than the database/);
await new Promise((r) => setTimeout(r, 20));
assert.equal(await late, 'this transaction has ended', 'a late call of a refused transaction throws');
assert.equal(await count('tx = 3'), 0, 'a refused transaction is rolled back, its late writes never autocommit');

// Synchronous writes of not yet ported code, fired from timers and I/O while 200 transactions of 5 awaited inserts run.
const syncWrites = setInterval(() => {
  assert.equal(db.raw.inTransaction, false, 'a synchronous write found a transaction open');
  db.raw.prepare('INSERT INTO t (tx, v) VALUES (0, ?)').run('sync');
}, 0);
await Promise.all(Array.from({ length: 200 }, (_, i) => db.transaction(async (tx) => {
  for (let k = 0; k < 5; k++) await tx.run('INSERT INTO t (tx, v) VALUES (?, ?)', [100 + i, String(k)]);
})));
clearInterval(syncWrites);
const runs = db.raw.prepare('SELECT tx FROM t WHERE tx >= 100 OR tx = 0 ORDER BY id').pluck().all();
for (let i = 0; i < runs.length; i++) {
  if (runs[i] >= 100 && runs[i] !== runs[i - 1]) assert.deepEqual(runs.slice(i, i + 5), Array(5).fill(runs[i]), 'a transaction\'s rows are contiguous');
}
assert.ok(runs.filter((x) => x === 0).length > 0, 'synchronous writes ran meanwhile');
await db.close();
rmSync(dir, { recursive: true, force: true });
console.log('layer self-test: ok');
