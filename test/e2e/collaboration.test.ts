/**
 * Collaboration end to end with the BUILT programs: gantryd as a process and the real CLI (bin/gantry.js). A project
 * with an issue hook, an issue labelled and assigned, a comment mentioning a second user whose `gantry todo list`
 * shows it, the issue closed from the CLI, and the issue hooks delivered to a real HTTP receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupTmp, killAll, runCli, startGantryd, tmp, type Daemon } from './helpers.js';
import { startReceiver, waitUntil, type HookReceiver } from '../helpers/hook-receiver.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';

const PASSWORD = 'collab-root-password';
const P = 'root/e2e-collab';

let daemon: Daemon;
let pg: Awaited<ReturnType<typeof createTestDatabase>> | null = null;
let recv: HookReceiver;
let rootCfg: string;
let aliceCfg: string;
const root = (...args: string[]) => runCli(args, { configDir: rootCfg });
const alice = (...args: string[]) => runCli(args, { configDir: aliceCfg });
/** Run a CLI command and insist on exit code 0 (its stderr is the failure message otherwise). */
async function ok(p: ReturnType<typeof runCli>) {
  const r = await p;
  expect(r.code, `${r.stderr}${r.stdout}`).toBe(0);
  return r;
}

beforeAll(async () => {
  recv = await startReceiver();
  // the PostgreSQL pass: the daemon runs on a fresh database of that server (it migrates it)
  pg = TEST_DATABASE_URL ? await createTestDatabase(TEST_DATABASE_URL) : null;
  daemon = await startGantryd(['--port', '0', '--data-dir', tmp(), '--root-password', PASSWORD, ...(pg ? ['--database-url', pg.url] : [])], cleanEnv());
  rootCfg = tmp('gantry-e2e-cfg-');
  aliceCfg = tmp('gantry-e2e-cfg-');
  await ok(runCli(['login', '--url', daemon.url, '--username', 'root', '--password-stdin'], { configDir: rootCfg, input: `${PASSWORD}\n` }));
  await ok(root('user', 'create', '--username', 'alice', '--email', 'alice@example.com', '--name', 'Alice', '--password', 'alice-password'));
  await ok(runCli(['login', '--url', daemon.url, '--username', 'alice', '--password-stdin'], { configDir: aliceCfg, input: 'alice-password\n' }));
}, 60_000);

afterAll(async () => {
  await daemon?.stop();
  killAll();
  await pg?.drop();
  await recv?.stop();
  cleanupTmp();
});

describe('issues, labels, comments, todos and hooks through the CLI and the real daemon', () => {
  it('files, labels, assigns, mentions, closes; the mention is a todo and the hooks arrive', async () => {
    await ok(root('project', 'create', 'e2e-collab', '--visibility', 'public'));
    await ok(root('hook', 'add', P, `${recv.url}/collab`, '--no-push-events', '--issues-events', '--note-events', '--secret-token', 'e2e-collab'));
    await ok(root('label', 'create', P, 'bug', '--color', '#d9534f'));

    const created = await ok(root('issue', 'create', P, '--title', 'Checkout fails', '--description', 'Steps to reproduce', '--json'));
    const issue = JSON.parse(created.stdout);
    expect(issue).toMatchObject({ iid: 1, state: 'opened', labels: [], assignee: null });
    await ok(root('issue', 'update', P, '1', '--label', 'bug'));
    await ok(root('issue', 'update', P, '1', '--assignee', 'root'));
    await ok(root('issue', 'comment', P, '1', '--body', '@alice can you reproduce this? mail me at root@example.com'));

    const todos = await ok(alice('todo', 'list'));
    expect(todos.stdout).toMatch(/^\d+\s+root\/e2e-collab\s+#1\s+mentioned\s+@root\s+Checkout fails\s+@alice can you reproduce/m);
    const todoJson = JSON.parse((await ok(alice('todo', 'list', '--json'))).stdout);
    expect(todoJson).toHaveLength(1);
    expect(todoJson[0]).toMatchObject({ action_name: 'mentioned', target_type: 'Issue', target: { iid: 1, labels: ['bug'] }, state: 'pending' });
    expect(todoJson[0].target_url).toMatch(/\/root\/e2e-collab\/issues\/1#note_\d+$/);

    const closed = await ok(root('issue', 'close', P, '1'));
    expect(closed.stderr).toBe(`Closed issue #1 in ${P}.\n`);
    const show = await ok(root('issue', 'show', P, '1'));
    expect(show.stdout).toMatch(/^state:\s+closed$/m);
    expect(show.stdout).toMatch(/^labels:\s+bug$/m);
    expect(show.stdout).toMatch(/^assignee:\s+@root$/m);
    expect(show.stdout).toContain('@alice can you reproduce this?');

    await waitUntil(() => recv.to('/collab').some((r) => r.json().object_kind === 'issue' && r.json().object_attributes.action === 'close'), 'the close hook');
    const deliveries = recv.to('/collab').map((r) => r.json());
    const close = deliveries.find((d) => d.object_kind === 'issue' && d.object_attributes.action === 'close');
    expect(close).toMatchObject({
      object_kind: 'issue', user: { username: 'root' }, project: { path_with_namespace: P },
      object_attributes: { iid: 1, title: 'Checkout fails', state: 'closed', action: 'close' },
    });
    expect(recv.to('/collab').every((r) => r.headers['x-gitlab-token'] === 'e2e-collab')).toBe(true);
    expect(deliveries.find((d) => d.object_kind === 'issue' && d.object_attributes.action === 'open')).toBeDefined();
    await waitUntil(() => recv.to('/collab').some((r) => r.json().object_kind === 'note'), 'the note hook');
    const note = recv.to('/collab').map((r) => r.json()).find((d) => d.object_kind === 'note');
    expect(note).toMatchObject({ object_attributes: { note: expect.stringContaining('@alice') }, issue: { iid: 1 } });

    // alice marks it done from the CLI
    const done = await ok(alice('todo', 'done', String(todoJson[0].id)));
    expect(done.stderr).toBe(`Marked todo ${todoJson[0].id} done (issue #1 of ${P}).\n`);
    expect((await ok(alice('todo', 'list'))).stderr).toBe('No pending todos found.\n');
  }, 60_000);
});
