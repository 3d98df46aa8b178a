/**
 * A recording fake of the runner API v1 (GitLab 8.13 behaviour) for testing the agent without the daemon:
 * a queue of builds, PUT/PATCH/artifacts handlers that keep what they received, and knobs to inject answers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { BuildPayload } from '../../runner-agent/types.js';

/** One request the fake saw. */
export interface Recorded {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** What the fake knows about one build. */
export interface FakeBuild {
  payload: BuildPayload;
  status: 'pending' | 'running' | 'success' | 'failed' | 'canceled';
  /** The trace as assembled from PATCHes (and replaced by PUTs with a trace). */
  trace: Buffer;
  /** The trace of the final PUT. */
  finalTrace: string | null;
  states: string[];
  patches: string[];
  /** The status answered to each PATCH, in order. */
  patchStatuses: number[];
  /** The PATCH-assembled trace when the final PUT arrived (before the PUT replaced it). */
  traceBeforeFinal: string | null;
  artifacts: { filename: string; data: Buffer; expireIn: string | null } | null;
}

/** The fake server and its knobs. */
export interface FakeServer {
  url: string;
  requests: Recorded[];
  builds: Map<number, FakeBuild>;
  /** Registration tokens accepted by runners/register and the runner tokens handed out. */
  registrationToken: string;
  runnerTokens: Set<string>;
  /** Queue a build for the next builds/register. */
  enqueue(payload: BuildPayload): FakeBuild;
  /** Called for each PATCH before it is handled; return a status to answer instead (the body is still stored when `store` is set). */
  patchHook: ((build: FakeBuild, start: number, body: Buffer) => { status: number; store?: boolean } | null) | null;
  /** Answer PATCHes with 404 (no incremental trace support). */
  noIncremental: boolean;
  /** Called for each artifacts request before it is handled; return a status to answer instead (a balancer's 502, say). */
  artifactsHook: ((build: FakeBuild, method: string) => number | null) | null;
  /** Wait until the build reached a final state through PUT. */
  waitFinished(id: number, timeoutMs?: number): Promise<FakeBuild>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The file part of a multipart body (name "file"): filename and content. */
export function multipartFile(contentType: string, body: Buffer): { filename: string; data: Buffer } | null {
  const m = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!m) return null;
  const boundary = Buffer.from(`--${m[1] ?? m[2]}`);
  let pos = body.indexOf(boundary);
  while (pos !== -1) {
    const headerEnd = body.indexOf('\r\n\r\n', pos);
    if (headerEnd === -1) return null;
    const headers = body.subarray(pos + boundary.length, headerEnd).toString();
    const next = body.indexOf(boundary, headerEnd);
    if (next === -1) return null;
    const name = /name="([^"]*)"/.exec(headers)?.[1];
    const filename = /filename="([^"]*)"/.exec(headers)?.[1];
    if (name === 'file' && filename !== undefined) return { filename, data: body.subarray(headerEnd + 4, next - 2) };
    pos = next;
  }
  return null;
}

/** Start the fake on a free port. */
export async function startFakeServer(): Promise<FakeServer> {
  const queue: FakeBuild[] = [];
  const waiters: Array<() => void> = [];
  const fake: FakeServer = {
    url: '',
    requests: [],
    builds: new Map(),
    registrationToken: 'REGTOKEN123',
    runnerTokens: new Set(),
    patchHook: null,
    noIncremental: false,
    artifactsHook: null,
    enqueue(payload) {
      const b: FakeBuild = { payload, status: 'pending', trace: Buffer.alloc(0), finalTrace: null, states: [], patches: [], patchStatuses: [], traceBeforeFinal: null, artifacts: null };
      fake.builds.set(payload.id, b);
      queue.push(b);
      return b;
    },
    waitFinished(id, timeoutMs = 20_000) {
      return new Promise((resolve, reject) => {
        const started = Date.now();
        const check = () => {
          const b = fake.builds.get(id);
          if (b && b.finalTrace !== null) return resolve(b);
          if (Date.now() - started > timeoutMs) return reject(new Error(`build ${id} did not finish in ${timeoutMs} ms`));
          waiters.push(check);
        };
        check();
      });
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const notify = () => {
    for (const w of waiters.splice(0)) w();
  };
  setInterval(notify, 100).unref();

  const json = (res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(body === undefined ? '' : JSON.stringify(body));
  };

  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const url = new URL(req.url ?? '/', 'http://x');
      const path = url.pathname;
      fake.requests.push({ method: req.method ?? '', path: `${path}${url.search}`, headers: req.headers, body });
      const data = () => (body.length ? JSON.parse(body.toString()) : {}) as Record<string, unknown>;
      let m: RegExpExecArray | null;
      if (req.method === 'POST' && path === '/ci/api/v1/runners/register.json') {
        const d = data();
        if (d.token !== fake.registrationToken) return json(res, 403, { message: '403 Forbidden' });
        const token = `runnertoken${fake.runnerTokens.size + 1}`.padEnd(30, 'x');
        fake.runnerTokens.add(token);
        return json(res, 201, { id: fake.runnerTokens.size, token });
      }
      if (req.method === 'DELETE' && path === '/ci/api/v1/runners/delete') {
        const d = data();
        if (!fake.runnerTokens.delete(String(d.token))) return json(res, 403, { message: '403 Forbidden' });
        return json(res, 200, true);
      }
      if (req.method === 'POST' && path === '/ci/api/v1/builds/register.json') {
        if (!fake.runnerTokens.has(String(data().token))) return json(res, 403, { message: '403 Forbidden' });
        const b = queue.shift();
        if (!b) {
          res.writeHead(204);
          return res.end();
        }
        b.status = 'running';
        return json(res, 201, b.payload);
      }
      if ((m = /^\/ci\/api\/v1\/builds\/(\d+)\.json$/.exec(path)) && req.method === 'PUT') {
        const b = fake.builds.get(Number(m[1]));
        const d = data();
        if (!b || !fake.runnerTokens.has(String(d.token))) return json(res, 403, { message: '403 Forbidden' });
        if (b.status !== 'running') return json(res, 404, { message: '404 Not found' });
        b.states.push(String(d.state));
        if (d.state === 'success' || d.state === 'failed') b.traceBeforeFinal = b.trace.toString();
        if (typeof d.trace === 'string') b.trace = Buffer.from(d.trace);
        if (d.state === 'success' || d.state === 'failed') {
          b.status = d.state;
          b.finalTrace = String(d.trace ?? '');
          notify();
        }
        return json(res, 200, true);
      }
      if ((m = /^\/ci\/api\/v1\/builds\/(\d+)\/trace\.txt$/.exec(path)) && req.method === 'PATCH') {
        const b = fake.builds.get(Number(m[1]));
        if (!b) return json(res, 404, { message: '404 Not Found' });
        if (fake.noIncremental) return json(res, 404, { message: '404 Not Found' });
        if (req.headers['build-token'] !== b.payload.token) return json(res, 403, { message: '403 Forbidden' });
        const range = String(req.headers['content-range'] ?? '');
        b.patches.push(range);
        const start = Number(range.split('-')[0]);
        const hook = fake.patchHook?.(b, start, body);
        if (hook) {
          if (hook.store && start === b.trace.length) b.trace = Buffer.concat([b.trace, body]);
          b.patchStatuses.push(hook.status);
          return json(res, hook.status, {}, { 'build-status': b.status, range: `0-${b.trace.length}` });
        }
        if (start !== b.trace.length) {
          b.patchStatuses.push(416);
          return json(res, 416, { error: '416 Range Not Satisfiable' }, { range: `0-${b.trace.length}` });
        }
        b.trace = Buffer.concat([b.trace, body]);
        b.patchStatuses.push(202);
        return json(res, 202, {}, { 'build-status': b.status, range: `0-${b.trace.length}` });
      }
      if ((m = /^\/ci\/api\/v1\/builds\/(\d+)\/artifacts$/.exec(path))) {
        const b = fake.builds.get(Number(m[1]));
        if (!b) return json(res, 404, { message: '404 Not Found' });
        if (req.headers['build-token'] !== b.payload.token) return json(res, 403, { message: '403 Forbidden' });
        const injected = fake.artifactsHook?.(b, req.method ?? '');
        if (injected) return json(res, injected, { message: `${injected} injected` });
        if (req.method === 'POST') {
          if (b.status !== 'running') return json(res, 403, { message: '403 Forbidden  - Build is not running!' });
          const file = multipartFile(String(req.headers['content-type']), body);
          if (!file) return json(res, 400, { message: '400 (Bad request) "file" not given' });
          b.artifacts = { ...file, expireIn: url.searchParams.get('expire_in') };
          return json(res, 201, b.payload);
        }
        if (req.method === 'GET') {
          if (!b.artifacts) return json(res, 404, { message: '404 Not Found' });
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          return res.end(b.artifacts.data);
        }
      }
      json(res, 404, { message: '404 Not Found' });
    })().catch((e: Error) => {
      res.writeHead(500);
      res.end(String(e.stack));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return fake;
}
