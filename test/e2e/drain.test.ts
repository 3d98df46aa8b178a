/**
 * SIGTERM drains (issue 22, CONTRACT.md): GET /-/readiness turns 503 at once, requests in flight and requests that
 * still arrive on open keep-alive connections are answered (with `Connection: close`, never Fastify's 503), new
 * connections are served for GANTRY_DRAIN_GRACE when a balancer checks readiness and refused after it, and the process
 * exits 0; GANTRY_DRAIN_TIMEOUT bounds the whole stop. One gantryd (the built daemon, as operators run it) on the test
 * pass's engine: SQLite, or a fresh PostgreSQL database on the PostgreSQL pass.
 */
import { request, Agent, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { cleanEnv, cleanupTmp, killAll, runGantryd, startGantryd, tmp, type Daemon } from './helpers.js';
import { dataDirArgs, dropDatabases } from './database.js';

const PASSWORD = 'drain-root-password';

afterAll(async () => {
  killAll();
  await dropDatabases();
  cleanupTmp();
});

const start = async (env: Record<string, string> = {}) =>
  startGantryd(['--port', '0', ...(await dataDirArgs(tmp('gantry-drain-'))), '--root-password', PASSWORD], cleanEnv(env));

/** One HTTP request with node:http (an agent of our own to keep a connection open); the body text and headers. */
function send(url: string, path: string, opts: { method?: string; agent?: Agent; body?: string } = {}) {
  return new Promise<{ status: number; body: string; headers: IncomingMessage['headers']; reused: boolean }>((resolve, reject) => {
    const req = request(`${url}${path}`, {
      method: opts.method ?? 'GET',
      agent: opts.agent ?? false,
      headers: opts.body !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(opts.body) } : {},
    }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => { body += d; }).on('end', () => resolve({ status: res.statusCode!, body, headers: res.headers, reused: req.reusedSocket }));
    });
    req.on('error', reject);
    req.end(opts.body);
  });
}

/**
 * A POST /session whose body arrives in two halves: the request is in flight (headers read, body pending) until
 * `finish()`; `answer` is its response.
 */
function slowSignIn(url: string) {
  const body = JSON.stringify({ login: 'root', password: PASSWORD });
  const half = Math.floor(body.length / 2);
  let req!: ReturnType<typeof request>;
  const answer = new Promise<{ status: number; body: string; connection?: string }>((resolve, reject) => {
    req = request(`${url}/api/v3/session`, {
      method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => { text += d; }).on('end', () => resolve({ status: res.statusCode!, body: text, connection: res.headers.connection }));
    });
    req.on('error', reject);
  });
  req.write(body.slice(0, half));
  req.flushHeaders();
  return { answer, finish: () => req.end(body.slice(half)), abandon: () => req.destroy() };
}

/** Whether a new TCP connection to the daemon's port is accepted (true) or refused (false). */
function accepts(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname);
    socket.once('connect', () => { socket.destroy(); resolve(true); });
    socket.once('error', () => resolve(false));
  });
}

describe('gantryd drains on SIGTERM', () => {
  it('answers readiness 200, then 503 while draining; serves a slow request, an open keep-alive connection and new connections during the grace; exits 0', async () => {
    const d: Daemon = await start({ GANTRY_DRAIN_GRACE: '4', GANTRY_LOG_LEVEL: 'info' });
    const ready = await send(d.url, '/-/readiness');
    expect(ready.status).toBe(200);
    expect(JSON.parse(ready.body)).toEqual({ status: 'ok' });
    expect(ready.headers['cache-control']).toBe('no-store');

    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await send(d.url, '/-/health', { agent })).status).toBe(200); // the agent keeps this connection open
    const slow = slowSignIn(d.url);
    await sleep(100);
    const signalled = Date.now();
    d.proc.kill('SIGTERM');
    await sleep(300);

    const draining = await send(d.url, '/-/readiness');
    expect(draining.status).toBe(503);
    expect(JSON.parse(draining.body)).toEqual({ status: 'draining' });
    expect(draining.headers.connection).toBe('close');
    // /-/health still says the daemon works (liveness, not readiness)
    expect((await send(d.url, '/-/health')).status).toBe(200);
    // A request on the connection opened before the signal is answered, and told to close that connection.
    const onOpen = await send(d.url, '/-/health', { agent });
    expect(onOpen).toMatchObject({ status: 200, reused: true });
    expect(onOpen.headers.connection).toBe('close');
    // Writes still go through during the grace.
    const created = await send(d.url, '/api/v3/session', { method: 'POST', body: JSON.stringify({ login: 'root', password: PASSWORD }) });
    expect(created.status).toBe(201);

    expect(Date.now() - signalled, 'the requests above ran within the grace').toBeLessThan(4000);
    // After the grace, a second of 503s to repeatable requests (so that nginx, which never polls readiness, takes the
    // daemon out before its port closes), while a POST is still served.
    await sleep(signalled + 4300 - Date.now());
    const shed = await send(d.url, '/-/health');
    expect(shed.status).toBe(503);
    expect(shed.headers['retry-after']).toBe('1');
    expect((await send(d.url, '/api/v3/session', { method: 'POST', body: JSON.stringify({ login: 'root', password: PASSWORD }) })).status).toBe(201);
    await sleep(signalled + 5500 - Date.now()); // past the shed: the port is closed, the slow request still runs
    expect(await accepts(d.url)).toBe(false);
    expect(d.proc.exitCode).toBe(null);
    slow.finish();
    const signedIn = await slow.answer;
    expect(signedIn.status).toBe(201);
    expect(JSON.parse(signedIn.body)).toMatchObject({ username: 'root' });
    expect(signedIn.connection).toBe('close');
    expect(await d.exited).toEqual({ code: 0, signal: null });
    expect(d.stderr()).toMatch(/stopping: readiness answers 503; still serving new connections for 4 s/);
    agent.destroy();
  }, 30_000);

  it('stops accepting at once when no balancer checks readiness, and still finishes the request in flight', async () => {
    const d = await start({ GANTRY_DRAIN_GRACE: '20' });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    expect((await send(d.url, '/-/health', { agent })).status).toBe(200);
    const slow = slowSignIn(d.url);
    await sleep(100);
    const signalled = Date.now();
    d.proc.kill('SIGTERM');
    let refused = false;
    while (!refused && Date.now() - signalled < 3000) {
      refused = !(await accepts(d.url));
      if (!refused) await sleep(50);
    }
    expect(refused).toBe(true);
    slow.finish();
    expect((await slow.answer).status).toBe(201);
    expect(await d.exited).toEqual({ code: 0, signal: null });
    expect(Date.now() - signalled).toBeLessThan(5000); // no 20 s grace without a balancer
    agent.destroy();
  }, 30_000);

  it('answers a request whose headers were still arriving when it stopped with its own answer, not a 503', async () => {
    // The loss of issue 22: Fastify, once closing, answered 503 to a request read after close() began, and nginx
    // cannot retry a POST it has sent. The headers' first line arrives before the signal, the rest after it.
    const d = await start();
    const { hostname, port } = new URL(d.url);
    const socket = connect(Number(port), hostname);
    await new Promise((resolve) => socket.once('connect', resolve));
    let reply = '';
    socket.setEncoding('utf8').on('data', (t: string) => { reply += t; });
    const closed = new Promise((resolve) => socket.once('close', resolve));
    const body = JSON.stringify({ login: 'root', password: PASSWORD });
    socket.write('POST /api/v3/session HTTP/1.1\r\nHost: gantry\r\n');
    await sleep(100);
    d.proc.kill('SIGTERM');
    await sleep(300);
    socket.write(`Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    await closed; // the daemon closes the connection after its answer
    expect(reply).toMatch(/^HTTP\/1\.1 201 /);
    expect(reply).toMatch(/\r\nconnection: close\r\n/i);
    expect(reply).toContain('"username":"root"');
    expect(await d.exited).toEqual({ code: 0, signal: null });
  }, 30_000);

  it('cuts a request that never ends at GANTRY_DRAIN_TIMEOUT and exits 0', async () => {
    const d = await start({ GANTRY_DRAIN_TIMEOUT: '1' });
    const stuck = slowSignIn(d.url);
    const failed = stuck.answer.then(() => 'answered', () => 'cut');
    await sleep(100);
    const signalled = Date.now();
    d.proc.kill('SIGTERM');
    expect(await d.exited).toEqual({ code: 0, signal: null });
    const took = Date.now() - signalled;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(4000);
    expect(await failed).toBe('cut');
    expect(d.stderr()).toMatch(/requests still running after 1 s are cut \(GANTRY_DRAIN_TIMEOUT\)/);
  }, 30_000);

  it('refuses drain settings that are not seconds, in one line', async () => {
    const bad = await runGantryd(['--port', '0', ...(await dataDirArgs(tmp('gantry-drain-')))], cleanEnv({ GANTRY_DRAIN_GRACE: 'soon' }));
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe('gantryd: invalid GANTRY_DRAIN_GRACE "soon": use a number of seconds from 0 to 3600');
    const inverted = await runGantryd(['--port', '0', ...(await dataDirArgs(tmp('gantry-drain-')))], cleanEnv({ GANTRY_DRAIN_GRACE: '10', GANTRY_DRAIN_TIMEOUT: '5' }));
    expect(inverted.code).toBe(1);
    expect(inverted.stderr.trim()).toBe('gantryd: GANTRY_DRAIN_GRACE (10 s) must not exceed GANTRY_DRAIN_TIMEOUT (5 s)');
  }, 30_000);
});
