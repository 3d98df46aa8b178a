/**
 * Two gantryd on one PostgreSQL database behind nginx, configured with deploy/nginx.conf as operators copy it (only
 * its ${GANTRY_...} placeholders filled in, as envsubst does): issue 22's "stop and fail over without loss".
 *
 * - A rolling restart under a load of mixed requests (SIGTERM A, start it again, wait for its readiness and for nginx
 *   to take it back, then the same for B): every request answers its expected 2xx, and every acknowledged write is
 *   there afterwards.
 * - A SIGKILL of one daemon under the same load: no acknowledged write is lost and no idempotent request fails; a
 *   POST that was in flight on the killed daemon may fail (nginx never repeats a POST it has sent): counted, bounded.
 *
 * Runs when GANTRY_TEST_DATABASE_URL is set (npm test's PostgreSQL pass) and needs nginx with the stream module (.ci/run
 * installs them; outside CI the file is skipped without nginx). Uses the build (npm test builds first).
 */
import { spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { cleanEnv, cleanupTmp, killAll, startGantryd, tmp, type Daemon } from './helpers.js';
import { FAIL_TIMEOUT_MS, freePort, NGINX, startNginx, type Nginx } from './nginx.js';
import { createTestDatabase, TEST_DATABASE_URL } from '../helpers/postgres.js';

const PASSWORD = 'rolling-restart-root-password';

interface Failure { what: string; status: number | string; body: string }

/** Mixed requests through the balancer from several clients at once, with what each acknowledged. */
class Load {
  readonly failures: Failure[] = [];
  readonly counts = new Map<string, number>();
  /** Projects whose POST /projects answered 201: id -> name. */
  readonly projects = new Map<number, string>();
  /** Users whose POST /users answered 201: id -> username. */
  readonly users = new Map<number, string>();
  /** Per client, its own project and the descriptions PUT to it, in order: the acknowledged ones and the last tried. */
  readonly edits = new Map<number, { acknowledged: string[]; tried: string[] }>();
  private running = true;
  private readonly clients: Promise<void>[] = [];
  private seq = 0;

  constructor(private readonly url: string, private readonly token: string, private readonly prefix: string) {}

  start(clients: number, ownProjects: number[]): void {
    for (let c = 0; c < clients; c++) {
      this.edits.set(ownProjects[c], { acknowledged: [], tried: [] });
      this.clients.push(this.client(c, ownProjects[c]));
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.clients);
  }

  total(): number {
    let n = 0;
    for (const v of this.counts.values()) n += v;
    return n;
  }

  /** One request; its status and JSON body, or a network error as status 'error'. */
  private async call(method: string, path: string, body?: unknown): Promise<{ status: number | string; body: any; text: string }> {
    try {
      const res = await fetch(`${this.url}/api/v3${path}`, {
        method,
        headers: { 'private-token': this.token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      let parsed: unknown = null;
      try { parsed = JSON.parse(text); } catch { /* an nginx error page */ }
      return { status: res.status, body: parsed, text };
    } catch (e) {
      return { status: 'error', body: null, text: String((e as Error).cause ?? e) };
    }
  }

  private async client(c: number, own: number): Promise<void> {
    while (this.running) {
      const n = ++this.seq;
      const kind = n % 6;
      const record = (what: string, ok: boolean, r: { status: number | string; text: string }) => {
        this.counts.set(what, (this.counts.get(what) ?? 0) + 1);
        if (!ok) this.failures.push({ what, status: r.status, body: r.text.slice(0, 300) });
      };
      if (kind === 0) {
        const name = `${this.prefix}-${c}-${n}`;
        const r = await this.call('POST', '/projects', { name });
        record('POST /projects', r.status === 201 && r.body?.name === name, r);
        if (r.status === 201) this.projects.set(r.body.id, name);
      } else if (kind === 1) {
        const username = `${this.prefix}${c}x${n}`;
        const r = await this.call('POST', '/users', { username, email: `${username}@example.com`, name: username, password: 'loadpassword1' });
        record('POST /users', r.status === 201 && r.body?.username === username, r);
        if (r.status === 201) this.users.set(r.body.id, username);
      } else if (kind === 2) {
        const description = `edit ${c} ${n}`;
        const edits = this.edits.get(own)!;
        edits.tried.push(description);
        const r = await this.call('PUT', `/projects/${own}`, { description });
        record('PUT /projects/:id', r.status === 200 && r.body?.description === description, r);
        if (r.status === 200) edits.acknowledged.push(description);
      } else if (kind === 3) {
        const r = await this.call('GET', `/projects/${own}`);
        record('GET /projects/:id', r.status === 200 && r.body?.id === own, r);
      } else if (kind === 4) {
        const r = await this.call('GET', '/projects?per_page=5');
        record('GET /projects', r.status === 200 && Array.isArray(r.body), r);
      } else {
        const r = await this.call('GET', '/user');
        record('GET /user', r.status === 200 && r.body?.username === 'root', r);
      }
    }
  }

  /** Every acknowledged write, read back through the balancer: what is missing or different. */
  async missing(): Promise<string[]> {
    const wrong: string[] = [];
    for (const [id, name] of this.projects) {
      const r = await this.call('GET', `/projects/${id}`);
      if (r.status !== 200 || r.body?.name !== name) wrong.push(`project ${id} (${name}): ${r.status} ${r.text.slice(0, 200)}`);
    }
    for (const [id, username] of this.users) {
      const r = await this.call('GET', `/users/${id}`);
      if (r.status !== 200 || r.body?.username !== username) wrong.push(`user ${id} (${username}): ${r.status} ${r.text.slice(0, 200)}`);
    }
    for (const [id, { acknowledged, tried }] of this.edits) {
      if (!acknowledged.length) continue;
      const r = await this.call('GET', `/projects/${id}`);
      // The last acknowledged description, or one tried after it whose answer was lost (a SIGKILL's).
      const allowed = tried.slice(tried.lastIndexOf(acknowledged[acknowledged.length - 1]));
      if (r.status !== 200 || !allowed.includes(r.body?.description)) wrong.push(`project ${id}: description ${JSON.stringify(r.body?.description)}, expected one of ${JSON.stringify(allowed)}`);
    }
    return wrong;
  }
}

describe.skipIf(!TEST_DATABASE_URL || !NGINX)('two gantryd behind nginx (deploy/nginx.conf): restarts without loss', () => {
  const daemons: Record<'a' | 'b', Daemon | undefined> = { a: undefined, b: undefined };
  const ports = { a: 0, b: 0, aSsh: 0, bSsh: 0, http: 0, ssh: 0 };
  let args: (which: 'a' | 'b') => string[];
  let env: NodeJS.ProcessEnv;
  let nginx: Nginx | undefined;
  let drop: (() => Promise<void>) | undefined;
  let url: string;
  let root: string;

  const start = async (which: 'a' | 'b') => {
    daemons[which] = await startGantryd(args(which), env, 60_000);
    await untilReady(daemons[which]!.url);
  };
  /** Poll the daemon's readiness (as a balancer would) until it answers 200. */
  const untilReady = async (base: string) => {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const status = await fetch(`${base}/-/readiness`).then((r) => r.status, () => 0);
      if (status === 200) return;
      if (Date.now() > deadline) throw new Error(`${base}/-/readiness did not answer 200 within 30 s (last: ${status})`);
      await sleep(100);
    }
  };
  /** SIGTERM a daemon under load: it must exit 0; then start it again on the same ports. */
  const restart = async (which: 'a' | 'b', signal: NodeJS.Signals) => {
    const exit = await daemons[which]!.stop(signal);
    expect(exit, daemons[which]!.stderr().slice(-3000)).toEqual(signal === 'SIGKILL' ? { code: null, signal: 'SIGKILL' } : { code: 0, signal: null });
    await start(which);
    // nginx takes a daemon back once fail_timeout has passed since its last failure (deploy/nginx.conf).
    await sleep(FAIL_TIMEOUT_MS + 1000);
  };
  const log = () => `${nginx?.log()}\n` +
    `A: ${daemons.a?.stderr().slice(-2000)}\nB: ${daemons.b?.stderr().slice(-2000)}`;

  beforeAll(async () => {
    const db = await createTestDatabase(TEST_DATABASE_URL!);
    drop = db.drop;
    const dataDir = tmp('gantry-rolling-');
    for (const k of Object.keys(ports) as (keyof typeof ports)[]) ports[k] = await freePort();
    url = `http://127.0.0.1:${ports.http}`;
    // As the README says: each daemon its own ports, both naming the balancer; a short grace (the test checks
    // readiness, as a balancer would, so the daemons give one).
    args = (which) => [
      '--port', String(ports[which]), '--data-dir', dataDir, '--root-password', PASSWORD, '--database-url', db.url,
      '--external-url', url, '--ssh-port', String(which === 'a' ? ports.aSsh : ports.bSsh), '--ssh-external-port', String(ports.ssh),
    ];
    env = cleanEnv({ GANTRY_DRAIN_GRACE: '1', GANTRY_LOG_LEVEL: 'info' });
    await Promise.all([start('a'), start('b')]);

    nginx = await startNginx({
      a: `127.0.0.1:${ports.a}`, b: `127.0.0.1:${ports.b}`, aSsh: `127.0.0.1:${ports.aSsh}`, bSsh: `127.0.0.1:${ports.bSsh}`,
      http: ports.http, ssh: ports.ssh,
    });
    const session = await fetch(`${url}/api/v3/session`, {
      method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ login: 'root', password: PASSWORD }),
    });
    expect(session.status).toBe(201);
    root = ((await session.json()) as { private_token: string }).private_token;
  }, 120_000);

  afterAll(async () => {
    nginx?.stop();
    for (const d of [daemons.a, daemons.b]) if (d && d.proc.exitCode === null) await d.stop('SIGTERM');
    killAll();
    await drop?.();
    cleanupTmp();
  });

  /** Projects the load's clients edit, one each. */
  const ownProjects = async (count: number, prefix: string) => {
    const ids: number[] = [];
    for (let i = 0; i < count; i++) {
      const r = await fetch(`${url}/api/v3/projects`, {
        method: 'POST', headers: { 'private-token': root, 'content-type': 'application/json' }, body: JSON.stringify({ name: `${prefix}-${i}` }),
      });
      expect(r.status).toBe(201);
      ids.push(((await r.json()) as { id: number }).id);
    }
    return ids;
  };

  it('passes the API and WebSocket upgrades through, to both daemons in turn', async () => {
    const r = await fetch(`${url}/api/v3/user`, { headers: { 'private-token': root } });
    expect(r.status).toBe(200);
    // Round robin: the access log names both daemons after a few requests.
    for (let i = 0; i < 6; i++) await (await fetch(`${url}/-/health`)).arrayBuffer();
    const access = nginx!.accessLog();
    expect(access).toContain(`upstream=127.0.0.1:${ports.a}`);
    expect(access).toContain(`upstream=127.0.0.1:${ports.b}`);
    // The live trace endpoint's WebSocket upgrade goes through to a daemon's upgrade handler, whose own refusal comes
    // back: 401 without a token (a plain GET there, with the Upgrade header dropped, would be the API's 404).
    const ws = new WebSocket(`ws://127.0.0.1:${ports.http}/-/live/builds/1/trace`);
    const refused = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      ws.on('unexpected-response', (_req, res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => { body += d; }).on('end', () => resolve({ status: res.statusCode!, body }));
      });
      ws.on('open', () => reject(new Error('opened a live trace without a token')));
      ws.on('error', (e) => { if (!/Unexpected server response/.test(e.message)) reject(e); });
    });
    expect(refused, log()).toEqual({ status: 401, body: JSON.stringify({ message: '401 Unauthorized' }) });
    // SSH through the stream module, once the daemons run SSH on PostgreSQL (they say so in their log when they do not).
    if (/gantryd ssh listening on/.test(daemons.a!.stdout())) {
      const direct = spawnSync('ssh-keyscan', ['-p', String(ports.aSsh), '127.0.0.1'], { encoding: 'utf8', timeout: 15_000 });
      const balanced = spawnSync('ssh-keyscan', ['-p', String(ports.ssh), '127.0.0.1'], { encoding: 'utf8', timeout: 15_000 });
      const key = (out: string) => out.split('\n').filter((l) => l && !l.startsWith('#')).map((l) => l.split(' ').slice(1).join(' ')).sort();
      expect(key(balanced.stdout)).toEqual(key(direct.stdout));
      expect(key(balanced.stdout).length).toBeGreaterThan(0);
    }
  }, 60_000);

  it('a rolling restart (SIGTERM A, start it, then B) under mixed requests: zero failed requests, every acknowledged write kept', async () => {
    const load = new Load(url, root, 'rolling');
    load.start(6, await ownProjects(6, 'rolling'));
    await sleep(1500);
    await restart('a', 'SIGTERM');
    await restart('b', 'SIGTERM');
    await sleep(1000);
    await load.stop();
    const summary = JSON.stringify(Object.fromEntries(load.counts));
    console.log(`rolling restart: ${load.total()} requests through nginx, ${load.failures.length} failed: ${summary}`);
    expect(load.failures, `${summary}\n${log()}`).toEqual([]);
    expect(load.total()).toBeGreaterThan(100);
    for (const what of ['POST /projects', 'POST /users', 'PUT /projects/:id', 'GET /projects/:id']) expect(load.counts.get(what) ?? 0, summary).toBeGreaterThan(10);
    expect(await load.missing()).toEqual([]);
    // Both restarted daemons serve again.
    for (const d of [daemons.a!, daemons.b!]) expect((await fetch(`${d.url}/-/readiness`)).status).toBe(200);
  }, 180_000);

  it('a SIGKILL of one daemon under mixed requests: no acknowledged write lost, no idempotent request failed', async () => {
    const load = new Load(url, root, 'killed');
    load.start(6, await ownProjects(6, 'killed'));
    await sleep(1500);
    await restart('b', 'SIGKILL');
    await sleep(1000);
    await load.stop();
    const summary = JSON.stringify(Object.fromEntries(load.counts));
    // Only a POST in flight on the killed daemon may fail, and only as nginx's 502 (it never repeats a sent POST).
    const unexpected = load.failures.filter((f) => !(f.what.startsWith('POST ') && f.status === 502));
    expect(unexpected, `${summary}\n${log()}`).toEqual([]);
    expect(load.failures.length, `${JSON.stringify(load.failures)}\n${log()}`).toBeLessThanOrEqual(6); // at most one per client
    console.log(`SIGKILL: ${load.total()} requests through nginx, ${load.failures.length} POST(s) in flight on the killed daemon failed with 502: ${summary}`);
    expect(load.total()).toBeGreaterThan(50);
    expect(await load.missing()).toEqual([]);
  }, 180_000);
});

describe.skipIf(!TEST_DATABASE_URL)('GET /-/readiness on PostgreSQL', () => {
  afterAll(() => {
    killAll();
    cleanupTmp();
  });

  it('answers 503 "database unreachable" once the database is gone; the daemon runs on and stops with 0', async () => {
    const db = await createTestDatabase(TEST_DATABASE_URL!, { migrated: true });
    const d = await startGantryd(['--port', '0', '--data-dir', tmp('gantry-ready-'), '--root-password', PASSWORD, '--database-url', db.url], cleanEnv(), 60_000);
    const ready = await fetch(`${d.url}/-/readiness`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ok' });
    await db.drop(); // ends the daemon's connections; new ones find no database
    const gone = await fetch(`${d.url}/-/readiness`);
    expect(gone.status, d.stderr().slice(-2000)).toBe(503);
    expect(await gone.json()).toEqual({ status: 'database unreachable' });
    // the daemon itself keeps running and stops as usual
    expect(d.proc.exitCode).toBe(null);
    expect(await d.stop('SIGTERM')).toEqual({ code: 0, signal: null });
  }, 90_000);
});
