/**
 * Live build traces over WebSocket (the `ws` package in noServer mode on the daemon's HTTP server).
 *
 * Endpoint: GET /-/live/builds/:build_id/trace  (WebSocket upgrade; `.json`-free, outside /api/v3)
 *   Auth: as the API (policy/authentication.ts authenticate, the one path /api/v3 takes): a private or personal
 *   access token (`?private_token=` or the PRIVATE-TOKEN header), else an OAuth access token (`Authorization: Bearer`,
 *   `?access_token=` or `?bearer_token=`), then `sudo` (param or header) with the API's rules. Refusals are plain HTTP
 *   answers to the upgrade request with a JSON body: 401 no/invalid/expired/revoked token, the API's 403/404 for a
 *   refused sudo, 404 no such build or the caller may not see it, 403 the caller sees the project but lacks read_build
 *   (404 for an unknown path under /-/live).
 *   The web pages' build page follows the same socket: with no token, a same-origin upgrade (its Origin header names
 *   this site: the Host it was sent to, or the external URL) authenticates by the pages' session cookie, or reads as an
 *   anonymous reader of a public project (policy anonymousCanProject: public builds); a cross-site Origin never uses
 *   the cookie (no cross-site WebSocket hijacking), so it is a 401 like any request without a token.
 *
 * Protocol (server -> client; the client sends nothing, pings are answered by ws):
 *   1. text  {"type":"status","build_id":N,"status":"running","trace_size":<bytes>}        first message
 *   2. binary frames: the trace bytes in order, starting at offset 0 with the trace stored so far, then every
 *      appended part as it arrives (concatenate binary frames to get the trace; split UTF-8 sequences are possible
 *      at frame edges, so decode the concatenation, not single frames).
 *   3. text  {"type":"reset"}  when the trace was rewritten with different content (a full-trace PUT that does not
 *      extend what was sent): discard what you have; the whole new trace follows in binary frames.
 *   4. text  {"type":"finished","build_id":N,"status":"success"|"failed"|"canceled"|"skipped"|...}  then the server
 *      closes with code 1000. A build that is already finished gets 1, 2 and 4 at once.
 *   Every 25 s the server pings; a dead peer is dropped.
 *
 * Several daemons: a follower hears the appends made in its own process at once; on PostgreSQL every daemon also
 * LISTENs on `gantry_trace` (services/ci/traces.ts sends the build id when an append, rewrite or finish commits) and
 * then reads the new bytes, up to the stored trace size, from the shared data directory. Every 5 s each follower also
 * compares the stored size with what it sent (the fallback when a notification was lost, or on SQLite).
 */
import { createHash, type Hash } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';
import { readFileSync } from 'node:fs';
import { WebSocketServer, type WebSocket } from 'ws';
import { stateSlot, type AppContext } from '../context.js';
import type { CommitStatusRow } from '../db/schema-ci.js';
import type { UserRow } from '../db/schema.js';
import { ApiError } from '../errors.js';
import { authenticate } from '../policy/authentication.js';
import { parseQuery } from '../query-string.js';
import { anonymousCanProject, canProjectAsync } from '../policy/permissions.js';
import { SESSION_COOKIE } from '../oauth/browser.js';
import { sessionUser } from '../services/oauth/index.js';
import { findBuild, onBuildFinished } from '../services/ci/builds.js';
import { lookupProjectAsync } from '../services/projects/projects.js';
import { listenForWakeUps } from '../db/layer/wake-ups.js';
import { onTraceAppend, readTraceRange, TRACE_CHANNEL, tracePath, type TraceEvent } from '../services/ci/traces.js';

// node:http through require, not an ES import: an ES import of a builtin reads all of its exports, and reading
// node:http's WebSocket makes Node load its own bundled undici, which the daemon never uses (in a bare `node`, 13 MB
// more resident than a require of node:http; docs/benchmarks.md).
const { STATUS_CODES } = createRequire(import.meta.url)('node:http') as typeof import('node:http');

/** The path of the live trace endpoint of a build. */
export const liveTracePath = (buildId: number) => `/-/live/builds/${buildId}/trace`;

const PATH = /^\/-\/live\/builds\/(\d{1,15})\/trace\/?$/;
const ACTIVE = new Set(['created', 'pending', 'running']);
const PING_MS = 25_000;
const STATUS_CHECK_MS = 5_000;

type Finisher = (build: CommitStatusRow) => void;
/** This daemon's followers waiting for their build to finish, by build id. */
const FINISHERS = stateSlot('live trace finishers', () => new Map<number, Set<Finisher>>());

onBuildFinished((ctx, build) => {
  for (const f of [...(ctx.state.get(FINISHERS).get(build.id) ?? [])]) f(build);
});

function onFinished(ctx: AppContext, buildId: number, fn: Finisher): () => void {
  const finishers = ctx.state.get(FINISHERS);
  let set = finishers.get(buildId);
  if (!set) finishers.set(buildId, (set = new Set()));
  set.add(fn);
  return () => {
    set!.delete(fn);
    if (set!.size === 0) finishers.delete(buildId);
  };
}

function refuse(socket: Duplex, status: number, text: string, answer: unknown = { message: `${status} ${text}` }): void {
  const body = JSON.stringify(answer);
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

function readWhole(ctx: AppContext, build: CommitStatusRow): Buffer {
  try {
    return readFileSync(tracePath(ctx, build));
  } catch {
    return Buffer.alloc(0);
  }
}

/** What a daemon's followers of one build do when another daemon changed its trace (`replaced`: rewritten or finished). */
type RemoteChange = (replaced: boolean) => void;

/** Serve one follower: existing trace, appended parts, then the final status. */
function follow(ctx: AppContext, ws: WebSocket, build: CommitStatusRow, remote: Map<number, Set<RemoteChange>>): void {
  let sent = 0;
  let digest: Hash = createHash('sha256');
  let closed = false;
  const send = (data: Buffer) => {
    if (data.length === 0 || closed) return;
    ws.send(data, { binary: true });
    digest.update(data);
    sent += data.length;
  };
  const sentDigest = () => digest.copy().digest('hex');

  const onTrace = (e: TraceEvent) => {
    if (closed) return;
    if (!e.replaced) {
      if (e.offset === sent) return send(e.data);
      if (e.offset < sent && e.offset + e.data.length > sent) return send(e.data.subarray(sent - e.offset));
      if (e.offset > sent) return send(readWhole(ctx, build).subarray(sent));
      return;
    }
    // A rewrite: if it starts with exactly what was sent, only the rest is new.
    if (e.data.length >= sent && createHash('sha256').update(e.data.subarray(0, sent)).digest('hex') === sentDigest()) {
      return send(e.data.subarray(sent));
    }
    ws.send(JSON.stringify({ type: 'reset' }));
    sent = 0;
    digest = createHash('sha256');
    send(e.data);
  };

  const finish = (b: CommitStatusRow) => {
    if (closed) return;
    // Whatever reached the file but not us yet (a full-trace rewrite just before the end is sent as events).
    const rest = readWhole(ctx, b).subarray(sent);
    if (rest.length) send(rest);
    ws.send(JSON.stringify({ type: 'finished', build_id: b.id, status: b.status }));
    cleanup();
    ws.close(1000, 'build finished');
  };

  // Subscribe and read in the same tick: appends are synchronous, so nothing can fall between the two.
  const offTrace = onTraceAppend(ctx, build.id, onTrace);
  const offFinished = onFinished(ctx, build.id, finish);
  const initial = readWhole(ctx, build);
  ws.send(JSON.stringify({ type: 'status', build_id: build.id, status: build.status, trace_size: initial.length }));
  send(initial);

  let alive = true;
  ws.on('pong', () => (alive = true));
  const ping = setInterval(() => {
    if (!alive) return ws.terminate();
    alive = false;
    ws.ping();
  }, PING_MS);
  /**
   * Catch up with the stored build: the bytes up to its trace size not sent yet (the whole trace when it was
   * rewritten), then the end when it finished. Used on a notification from another daemon and by the status poll.
   */
  let catching = false;
  let again: boolean | null = null;
  const catchUp = async (replaced: boolean): Promise<void> => {
    if (closed) return;
    if (catching) {
      again = (again ?? false) || replaced;
      return;
    }
    catching = true;
    try {
      const now = await findBuild(ctx, build.id);
      if (closed) return;
      if (!now) return finish({ ...build, status: 'deleted' });
      if (replaced) onTrace({ offset: 0, data: readTraceRange(ctx, build, 0, now.traceSize), replaced: true });
      else if (now.traceSize > sent) onTrace({ offset: sent, data: readTraceRange(ctx, build, sent, now.traceSize), replaced: false });
      if (!ACTIVE.has(now.status)) finish(now);
    } catch {
      // the next notification or poll tries again
    } finally {
      catching = false;
      if (again !== null && !closed) {
        const r = again;
        again = null;
        void catchUp(r);
      }
    }
  };
  let followers = remote.get(build.id);
  if (!followers) remote.set(build.id, (followers = new Set()));
  followers.add(catchUp);
  // A build can also stop without a finish event here (another daemon, skipped, erased, deleted): poll as a fallback.
  const check = setInterval(() => void catchUp(false), STATUS_CHECK_MS);
  const cleanup = () => {
    closed = true;
    offTrace();
    offFinished();
    clearInterval(ping);
    clearInterval(check);
    const set = remote.get(build.id);
    set?.delete(catchUp);
    if (set?.size === 0) remote.delete(build.id);
  };
  ws.on('close', cleanup);
  ws.on('error', cleanup);
  if (!ACTIVE.has(build.status)) finish(build);
}

/** Whether an upgrade comes from a page of this site: its Origin is the Host it was sent to, or the external URL's origin. */
export function sameOrigin(ctx: AppContext, req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  if (!origin || origin === 'null') return false;
  try {
    const o = new URL(origin);
    return (req.headers.host !== undefined && o.host === req.headers.host) || o.origin === new URL(ctx.externalUrl()).origin;
  } catch {
    return false;
  }
}

/** The session cookie of an upgrade request (the first of the name), or undefined. */
function sessionCookie(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** Attach the live trace WebSocket endpoint to the daemon's HTTP server (once); returns a closer for shutdown. */
export function attachLiveTrace(ctx: AppContext, server: Server): { close(): Promise<void> } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  const remote = new Map<number, Set<RemoteChange>>();
  // PostgreSQL: the trace changes committed by any daemon (this one's too: catching up is idempotent).
  // (SQLite: one process, whose appends reach the followers through onTraceAppend)
  const listening = ctx.data.dialect.name === 'postgres'
    ? listenForWakeUps(ctx.data, TRACE_CHANNEL, (payload) => {
      // null: the listening connection was made again and notifications may be lost; every follower looks again
      if (payload === null) {
        for (const set of remote.values()) for (const f of [...set]) f(true);
        return;
      }
      const [id, flag] = payload.split(':');
      for (const f of [...(remote.get(Number(id)) ?? [])]) f(flag === 'r');
    }, (e) => process.stderr.write(`gantry: live traces cannot LISTEN (followers poll instead): ${(e as Error)?.message ?? String(e)}\n`))
    : null;
  /** Serve an authenticated upgrade: the build must exist and be readable by `user` (null: a page's anonymous reader). */
  const admit = async (req: IncomingMessage, socket: Duplex, head: Buffer, buildId: number, user: UserRow | null) => {
    if (socket.destroyed) return;
    const build = await findBuild(ctx, buildId);
    const project = build ? await lookupProjectAsync(ctx, build.projectId) : null;
    if (!user) {
      // as the pages answer an anonymous reader: what anonymous_rules do not grant needs a sign-in
      if (!build || !project || !anonymousCanProject('read_build', project)) return refuse(socket, 401, 'Unauthorized');
    } else {
      if (!build || !project || !(await canProjectAsync(ctx, user, 'read_project', project))) return refuse(socket, 404, 'Not Found');
      if (!(await canProjectAsync(ctx, user, 'read_build', project))) return refuse(socket, 403, 'Forbidden');
    }
    if (socket.destroyed) return;
    wss.handleUpgrade(req, socket, head, (ws) => follow(ctx, ws, build, remote));
  };
  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const m = PATH.exec(url.pathname);
    if (!m) {
      // Not ours: leave it to another upgrade listener, or refuse when there is none.
      if (server.listenerCount('upgrade') <= 1) refuse(socket, 404, 'Not Found');
      return;
    }
    socket.on('error', () => socket.destroy());
    // The API's authentication over the query string (parsed as Fastify's routes parse it) and headers; no body.
    const raw = req.url ?? '';
    const query = parseQuery(raw.includes('?') ? raw.slice(raw.indexOf('?') + 1) : '');
    authenticate(ctx, { query, body: undefined, headers: req.headers }).then(
      async (user) => {
        if (user) return admit(req, socket, head, Number(m[1]), user);
        if (!sameOrigin(ctx, req)) return refuse(socket, 401, 'Unauthorized');
        // a page of this site: its session, or an anonymous reader when it has none (an ended session is a 401)
        const cookie = sessionCookie(req);
        const viewer = cookie ? await sessionUser(ctx, cookie) : null;
        if (cookie && !viewer) return refuse(socket, 401, 'Unauthorized');
        return admit(req, socket, head, Number(m[1]), viewer);
      },
      (e: unknown) => {
        // A refused sudo answers as on the API (403 not an admin, 404 no such user); anything else is ours.
        if (e instanceof ApiError) return refuse(socket, e.statusCode, STATUS_CODES[e.statusCode] ?? 'Error', e.body);
        refuse(socket, 500, 'Internal Server Error');
      },
    ).catch(() => {
      if (!socket.destroyed) refuse(socket, 500, 'Internal Server Error');
    });
  });
  // Followers are told the server is going away (1001) so that closing the HTTP server is not held up by them.
  const close = async () => {
    for (const client of wss.clients) client.close(1001, 'server shutting down');
    setTimeout(() => {
      for (const client of wss.clients) client.terminate();
    }, 1000).unref();
    wss.close();
    await listening?.stop();
  };
  server.on('close', () => wss.close());
  return { close };
}
