/**
 * Project hooks across two gantryd processes on one PostgreSQL database (issue 22, items 2 and 7): a hook added through
 * one daemon fires for events written through either; the delivery workers of both daemons send the queued events to
 * a real HTTP receiver, each event once under its Idempotency-Key, while both run at once and while either is stopped
 * (SIGSTOP: only the other one's worker is left); a failed delivery is retried under the same key; a hook deleted
 * through one daemon gets nothing for an event written through the other afterwards.
 * Runs when GANTRY_TEST_DATABASE_URL is set (npm test's PostgreSQL pass); needs the build (npm test builds first).
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commitFiles, gitOk, repoUrl, workTree } from '../helpers/git.js';
import { startReceiver, waitUntil, type HookReceiver, type Received } from '../helpers/hook-receiver.js';
import { TEST_DATABASE_URL } from '../helpers/postgres.js';
import { api, type Daemon } from './helpers.js';
import { startDaemonPair, type DaemonPair } from './database.js';

const PASSWORD = 'two-daemons-hooks-root-password';

describe.skipIf(!TEST_DATABASE_URL)('project hooks across two gantryd processes', () => {
  let pair: DaemonPair | undefined;
  let a: Daemon;
  let b: Daemon;
  let recv: HookReceiver;
  let root: string;
  let project: { id: number; path: string };
  let hookId: number;
  let dir: string | undefined;
  const logs = () => `A: ${a.stderr().slice(-2000)}\nB: ${b.stderr().slice(-2000)}`;
  /** The issue hooks received on `path` for the issues of these titles, by title. */
  const issueHooks = (path: string, titles: string[]): Map<string, Received[]> => {
    const by = new Map<string, Received[]>(titles.map((t) => [t, []]));
    for (const r of recv.to(path)) {
      if (r.headers['x-gitlab-event'] !== 'Issue Hook') continue;
      by.get(r.json().object_attributes.title)?.push(r);
    }
    return by;
  };
  const createIssue = async (d: Daemon, title: string) => {
    const r = await api(d.url, 'POST', `/projects/${project.id}/issues`, root, { title });
    expect(r.status, `${JSON.stringify(r.body)}\n${logs()}`).toBe(201);
  };
  /** Wait until every one of `titles` was received on `path` at least once; then each exactly once, all keys distinct. */
  async function deliveredOnce(path: string, titles: string[]): Promise<void> {
    await waitUntil(() => [...issueHooks(path, titles).values()].every((l) => l.length > 0), `${titles.length} issue hooks on ${path}`, 20_000);
    const by = issueHooks(path, titles);
    for (const [title, received] of by) expect(received.map((r) => r.json().object_attributes.action), title).toEqual(['open']);
    const keys = [...by.values()].map((l) => String(l[0].headers['idempotency-key']));
    expect(new Set(keys).size).toBe(titles.length);
  }

  beforeAll(async () => {
    recv = await startReceiver();
    pair = await startDaemonPair(TEST_DATABASE_URL!, PASSWORD, [], 'gantry-two-', { GANTRY_HOOK_RETRY_BASE_MS: '300' });
    ({ a, b } = pair);
    root = (await api(a.url, 'POST', '/session', null, { login: 'root', password: PASSWORD })).body.private_token;
    const p = await api(a.url, 'POST', '/projects', root, { name: 'hooked' });
    project = { id: p.body.id, path: p.body.path_with_namespace };
    // a slow receiver: deliveries overlap, so both workers have some in hand at once
    recv.on('/both', () => new Promise((r) => setTimeout(() => r(200), 50)));
  }, 90_000);

  afterAll(async () => {
    for (const d of [a, b]) d?.proc.kill('SIGCONT');
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (pair) expect(await pair.stop()).toEqual([{ code: 0, signal: null }, { code: 0, signal: null }]);
    await recv?.stop();
  }, 60_000);

  it('a hook added through B is listed through A, with its events', async () => {
    const hook = await api(b.url, 'POST', `/projects/${project.id}/hooks`, root, {
      url: `${recv.url}/both`, token: 'two-daemons-secret', push_events: true, issues_events: true, note_events: true,
    });
    expect(hook.status, JSON.stringify(hook.body)).toBe(201);
    hookId = hook.body.id;
    const listed = await api(a.url, 'GET', `/projects/${project.id}/hooks`, root);
    expect(listed.body).toEqual([expect.objectContaining({ id: hookId, url: `${recv.url}/both`, push_events: true, issues_events: true, note_events: true })]);
  });

  it('events written through both daemons at once, with both workers running, are delivered each once under its Idempotency-Key', async () => {
    const titles = Array.from({ length: 24 }, (_, i) => `at once ${i}`);
    await Promise.all(titles.map((t, i) => createIssue(i % 2 ? a : b, t)));
    await deliveredOnce('/both', titles);
    const sample = issueHooks('/both', titles).get(titles[0])![0];
    expect(sample.headers).toMatchObject({ 'x-gitlab-token': 'two-daemons-secret', 'user-agent': 'Gantry', 'content-type': 'application/json' });
    expect(String(sample.headers['idempotency-key'])).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  });

  it('while one daemon is stopped, the other\'s worker delivers what was written through it; then the other way round', async () => {
    for (const [stopped, running, name] of [[a, b, 'a'], [b, a, 'b']] as const) {
      stopped.proc.kill('SIGSTOP');
      try {
        const titles = [1, 2, 3].map((i) => `while ${name} is stopped ${i}`);
        for (const t of titles) await createIssue(running, t);
        await deliveredOnce('/both', titles);
      } finally {
        stopped.proc.kill('SIGCONT');
      }
    }
    // both answer again
    for (const d of [a, b]) expect((await api(d.url, 'GET', '/-/health')).status).toBe(200);
  });

  it('a push through B is delivered once', async () => {
    dir = await workTree();
    const sha = await commitFiles(dir, { 'README.md': '# hooked\n' }, 'first');
    await gitOk(dir, ['push', '-q', repoUrl(b.url, project.path, { username: 'root', password: PASSWORD }), 'HEAD:master']);
    await waitUntil(() => recv.to('/both').some((r) => r.headers['x-gitlab-event'] === 'Push Hook'), 'the push hook', 20_000);
    // a later event, delivered after it, so a second copy of the push would have come by now
    await createIssue(a, 'after the push');
    await deliveredOnce('/both', ['after the push']);
    const pushes = recv.to('/both').filter((r) => r.headers['x-gitlab-event'] === 'Push Hook');
    expect(pushes).toHaveLength(1);
    expect(pushes[0].json()).toMatchObject({ object_kind: 'push', after: sha, ref: 'refs/heads/master', project_id: project.id });
  });

  it('a delivery answered 500 is sent again under the same Idempotency-Key, and once answered 2xx never again', async () => {
    recv.on('/flaky', (n) => (n === 1 ? 500 : 200));
    const hook = await api(a.url, 'POST', `/projects/${project.id}/hooks`, root, { url: `${recv.url}/flaky`, issues_events: true, push_events: false });
    expect(hook.status).toBe(201);
    await createIssue(b, 'flaky one');
    await waitUntil(() => recv.to('/flaky').length >= 2, 'the retry', 20_000);
    await createIssue(a, 'flaky two');
    await deliveredOnce('/flaky', ['flaky two']);
    const first = issueHooks('/flaky', ['flaky one']).get('flaky one')!;
    expect(first).toHaveLength(2);
    expect(first[0].headers['idempotency-key']).toBe(first[1].headers['idempotency-key']);
    expect(first[0].body).toBe(first[1].body);
    // deleted through B (its entity), then again through A: the empty 200 of a DELETE of what is gone, as on one daemon
    expect((await api(b.url, 'DELETE', `/projects/${project.id}/hooks/${hook.body.id}`, root)).body).toMatchObject({ id: hook.body.id });
    const again = await api(a.url, 'DELETE', `/projects/${project.id}/hooks/${hook.body.id}`, root);
    expect([again.status, again.body]).toEqual([200, null]);
    expect((await api(a.url, 'GET', `/projects/${project.id}/hooks/${hook.body.id}`, root)).status).toBe(404);
  });

  it('a hook deleted through A gets nothing for an event written through B afterwards', async () => {
    const other = await api(b.url, 'POST', `/projects/${project.id}/hooks`, root, { url: `${recv.url}/other`, issues_events: true });
    expect(other.status).toBe(201);
    expect((await api(a.url, 'DELETE', `/projects/${project.id}/hooks/${hookId}`, root)).status).toBe(200);
    expect((await api(b.url, 'GET', `/projects/${project.id}/hooks`, root)).body.map((h: { id: number }) => h.id)).toEqual([other.body.id]);
    await createIssue(b, 'after the delete');
    // the hook that is left gets it; the deleted one never does (deliveries are queued with the event's transaction)
    await deliveredOnce('/other', ['after the delete']);
    expect(issueHooks('/both', ['after the delete']).get('after the delete')).toEqual([]);
  });
});
