/** A real HTTP receiver for hook deliveries (node:http on a local port): records requests, answers as told per path. */
import { createServer as createHttpServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One request the receiver got. */
export interface Received {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Arrival time (Date.now()). */
  at: number;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  json(): any;
}

/** How to answer the n-th (from 1) request to a path: a status code (maybe later), or 'hang' to never answer. */
export type Responder = (n: number, req: Received) => number | 'hang' | Promise<number>;

/** A receiver that can be stopped and started again on the same port. */
export interface HookReceiver {
  /** Base URL (http://127.0.0.1:<port> or https://...). */
  readonly url: string;
  readonly port: number;
  /** Every request so far, in arrival order. */
  readonly requests: Received[];
  /** The requests to one path. */
  to(path: string): Received[];
  /** How many requests (to `path`, or to any path) arrived under each Idempotency-Key header. */
  countsByKey(path?: string): Map<string, number>;
  /** Answer requests to `path` with this responder (default: 200). */
  on(path: string, responder: Responder): void;
  /** Requests being answered right now (for concurrency checks) and the most seen at once. */
  readonly active: number;
  readonly maxActive: number;
  /** The most requests to `path` in progress at once (from arrival to the answer sent or the connection gone). */
  maxActiveOn(path: string): number;
  /** Listen again (on the same port). */
  start(): Promise<void>;
  /** Stop listening and drop every connection (hanging answers included). */
  stop(): Promise<void>;
}

/** A self-signed certificate for 127.0.0.1 made with openssl (for the https receiver). */
function selfSigned(): { key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'gantry-cert-'));
  try {
    execFileSync('openssl', [
      'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
      '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'),
    ], { stdio: 'ignore' });
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Start a receiver on a free port (or `port`); `https` uses a fresh self-signed certificate. */
export async function startReceiver(opts: { https?: boolean; port?: number; listen?: boolean } = {}): Promise<HookReceiver> {
  const requests: Received[] = [];
  const responders = new Map<string, Responder>();
  const counts = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  let active = 0;
  let maxActive = 0;
  // requests at once on each path: counted from arrival until the answer is sent or the connection is gone
  const activeOn = new Map<string, number>();
  const maxOn = new Map<string, number>();
  const handler = (req: import('node:http').IncomingMessage, res: ServerResponse) => {
    const at = (req.url ?? '/').split('?')[0];
    active++;
    maxActive = Math.max(maxActive, active);
    activeOn.set(at, (activeOn.get(at) ?? 0) + 1);
    maxOn.set(at, Math.max(maxOn.get(at) ?? 0, activeOn.get(at)!));
    res.on('close', () => {
      active--;
      activeOn.set(at, activeOn.get(at)! - 1);
    });
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0];
      const r: Received = { method: req.method ?? '', path, headers: req.headers, body, at: Date.now(), json: () => JSON.parse(body) };
      requests.push(r);
      const n = (counts.get(path) ?? 0) + 1;
      counts.set(path, n);
      const answer = (responders.get(path) ?? (() => 200))(n, r);
      if (answer === 'hang') {
        hanging.add(res);
        res.on('close', () => { hanging.delete(res); });
        return;
      }
      void Promise.resolve(answer).then((code) => {
        if (!res.destroyed) res.writeHead(code, { 'content-type': 'text/plain' }).end(`answer ${code}\n`);
      });
    });
  };
  const tls = opts.https ? selfSigned() : null;
  let server: Server | null = null;
  let port = opts.port ?? 0;
  const listen = async () => {
    const s = tls ? createHttpsServer(tls, handler) : createHttpServer(handler);
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    const address = s.address();
    port = typeof address === 'object' && address ? address.port : port;
    server = s;
  };
  await listen();
  const receiver: HookReceiver = {
    get url() { return `${tls ? 'https' : 'http'}://127.0.0.1:${port}`; },
    get port() { return port; },
    requests,
    to: (path) => requests.filter((r) => r.path === path),
    countsByKey: (path) => {
      const counts = new Map<string, number>();
      for (const r of requests) {
        if (path !== undefined && r.path !== path) continue;
        const key = String(r.headers['idempotency-key'] ?? '');
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
      return counts;
    },
    on: (path, responder) => { responders.set(path, responder); },
    get active() { return active; },
    get maxActive() { return maxActive; },
    maxActiveOn: (path) => maxOn.get(path) ?? 0,
    start: listen,
    stop: async () => {
      const s = server;
      server = null;
      if (!s) return;
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
  };
  if (opts.listen === false) await receiver.stop();
  return receiver;
}

/** Wait until `check` returns (or resolves to) true, polling every 20 ms; fail with `what` after timeoutMs. */
export async function waitUntil(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Sleep. */
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
