/**
 * git over HTTP (smart protocol) at /<namespace>/<project>.git: info/refs advertisements, git-upload-pack (clone,
 * fetch) and git-receive-pack (push). Bodies stream straight into git (never buffered whole; larger than the app's
 * bodyLimit is fine), branch protection runs in a pre-receive hook, and accepted pushes go to processPush.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ChildProcess } from 'node:child_process';
import { PassThrough, Stream, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { AppContext } from '../context.js';
import { tooLarge } from '../errors.js';
import type { ProjectRow } from '../db/schema.js';
import { closeAllProcesses } from '../git/batch.js';
import { spawnGit } from '../git/command.js';
import { lookupProjectAsync } from '../services/projects/projects.js';
import { finishReceivePack, pushHookSetup, type RefCommand } from '../services/repository/receive-pack.js';
// Importing the repositories service registers the repository storage handler with every built app.
import { ensureRepository } from '../services/repository/repositories.js';
import { gitAccess, type GitAccess } from './auth.js';
import { PKT_FLUSH, pktLine, PushProtocolError, readPushCommands } from './pkt.js';

export { registerGitCredentialResolver, type GitCredential, type GitCredentialResolver } from './auth.js';

type Service = 'git-upload-pack' | 'git-receive-pack';
/** Room for the ref update commands around the pack in a push body. */
const PUSH_COMMANDS_ROOM = 64 * 1024;
const SERVICES: readonly Service[] = ['git-upload-pack', 'git-receive-pack'];

interface RepoParams {
  namespace: string;
  project: string;
}

const NO_CACHE = { 'cache-control': 'no-cache, max-age=0, must-revalidate', pragma: 'no-cache', expires: 'Fri, 01 Jan 1980 00:00:00 GMT' };

/** The project a git URL names (`<namespace>/<project>.git`, the `.git` optional), case-insensitively. */
async function projectFor(ctx: AppContext, params: RepoParams): Promise<ProjectRow | null> {
  const path = params.project.replace(/\.git$/i, '');
  if (!path || !params.namespace) return null;
  return lookupProjectAsync(ctx, `${params.namespace}/${path}`);
}

function refuse(reply: FastifyReply, access: Extract<GitAccess, { ok: false }>): FastifyReply {
  if (access.status === 401) reply.header('www-authenticate', 'Basic realm="Gantry"');
  return reply.code(access.status).type('text/plain; charset=utf-8').send(`${access.message}\n`);
}

/** The request body as a stream, gunzipped when the client compressed it. */
function bodyStream(request: FastifyRequest): Readable {
  const raw = request.body as Readable;
  if (String(request.headers['content-encoding'] ?? '').toLowerCase() !== 'gzip') return raw;
  const gunzip = createGunzip();
  raw.on('error', (e) => gunzip.destroy(e));
  return raw.pipe(gunzip);
}

/** Protocol v2 for upload-pack when the client asks for it (`Git-Protocol: version=2`). */
function protocolEnv(request: FastifyRequest, service: Service): Record<string, string> {
  const header = request.headers['git-protocol'];
  return service === 'git-upload-pack' && typeof header === 'string' && /(^|:)version=2(:|$)/.test(header) ? { GIT_PROTOCOL: 'version=2' } : {};
}

/** Stop git when the client goes away before the response was completely sent. */
function killOnAbort(reply: FastifyReply, child: ChildProcess): void {
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished && child.exitCode === null) child.kill();
  });
}

/**
 * A git process that stops reading early (receive-pack refusing a pack over --max-push-size, a bad pack) leaves the
 * rest of the request body unread, and a socket that is not read never sees its client go away: close the
 * connection once the response is out, so that neither the socket nor a server shutting down waits for it.
 */
function closeIfBodyUnread(request: FastifyRequest, reply: FastifyReply): void {
  reply.raw.on('finish', () => {
    const socket = request.raw.socket as { destroySoon?: () => void } | null;
    // (app.inject's fake socket has no destroySoon: nothing to close there)
    if (!request.raw.complete && typeof socket?.destroySoon === 'function') socket.destroySoon();
  });
}

/** Registers the git smart-HTTP routes. */
export default async function gitHttpRoutes(app: FastifyInstance): Promise<void> {
  const ctx = app.ctx;
  // The bodies of git's POSTs are handed over as the raw stream (no size limit, no buffering).
  for (const type of ['application/x-git-upload-pack-request', 'application/x-git-receive-pack-request']) {
    app.addContentTypeParser(type, (_request, payload, done) => done(null, payload));
  }
  app.addHook('onClose', async () => closeAllProcesses(ctx.paths.repositories));

  const prepare = async (request: FastifyRequest<{ Params: RepoParams }>, reply: FastifyReply, service: Service) => {
    if (/^\/(ci\/)?api\//.test(request.url)) {
      reply.callNotFound();
      return null;
    }
    const project = await projectFor(ctx, request.params);
    const access = await gitAccess(ctx, request, project, service === 'git-receive-pack');
    if (!access.ok) {
      refuse(reply, access);
      return null;
    }
    // git's POSTs come as application/x-git-*-request (handed over as the raw stream); any other type was parsed as
    // JSON, a form or multipart and is not a git request (was 500).
    if (request.method === 'POST' && !(request.body instanceof Stream)) {
      reply.code(415).type('text/plain; charset=utf-8').send(`Send the body as application/x-${service}-request, as git does.\n`);
      return null;
    }
    return { project: project!, user: access.user, repo: await ensureRepository(ctx, project!) };
  };

  app.get<{ Params: RepoParams; Querystring: { service?: string } }>(
    '/:namespace/:project/info/refs',
    // No automatic HEAD route: it would start git and never read its output.
    { config: { public: true }, schema: { hide: true }, exposeHeadRoute: false },
    async (request, reply) => {
      const service = request.query.service as Service;
      if (!SERVICES.includes(service)) {
        return reply.code(403).type('text/plain; charset=utf-8').send('Only the smart HTTP protocol is supported; use git 1.6.6 or later.\n');
      }
      const target = await prepare(request, reply, service);
      if (!target) return reply;
      const env = protocolEnv(request, service);
      const child = spawnGit([service.slice(4), '--stateless-rpc', '--advertise-refs', target.repo.path], { env, timeoutMs: 5 * 60 * 1000 });
      const out = new PassThrough();
      if (!env.GIT_PROTOCOL) out.write(Buffer.concat([pktLine(`# service=${service}\n`), PKT_FLUSH]));
      child.stdout!.pipe(out);
      child.stderr!.resume();
      child.on('error', (e) => out.destroy(e));
      killOnAbort(reply, child);
      return reply.code(200).headers(NO_CACHE).type(`application/x-${service}-advertisement`).send(out);
    },
  );

  app.post<{ Params: RepoParams }>('/:namespace/:project/git-upload-pack', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const target = await prepare(request, reply, 'git-upload-pack');
    if (!target) return reply;
    const child = spawnGit(['upload-pack', '--stateless-rpc', target.repo.path], { env: protocolEnv(request, 'git-upload-pack') });
    const body = bodyStream(request);
    body.on('error', () => child.kill());
    child.stdin!.on('error', () => undefined);
    body.pipe(child.stdin!);
    child.stderr!.resume();
    const out = new PassThrough();
    child.stdout!.pipe(out);
    child.on('error', (e) => out.destroy(e));
    killOnAbort(reply, child);
    closeIfBodyUnread(request, reply);
    return reply.code(200).headers(NO_CACHE).type('application/x-git-upload-pack-result').send(out);
  });

  app.post<{ Params: RepoParams }>('/:namespace/:project/git-receive-pack', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    const target = await prepare(request, reply, 'git-receive-pack');
    if (!target) return reply;
    // A push that says it is larger than --max-push-size is refused unread; git itself enforces the cap on the rest.
    const maxPush = ctx.config.limits.maxPushBytes;
    if (maxPush > 0 && Number(request.headers['content-length']) > maxPush + PUSH_COMMANDS_ROOM) throw tooLarge();
    const user = target.user!;
    const body = bodyStream(request);
    let commands: RefCommand[];
    let head: Buffer;
    try {
      ({ commands, head } = await readPushCommands(body));
    } catch (e) {
      // A body that says it is gzip and is not fails in zlib (Z_DATA_ERROR ...): the client's fault, as bad pkt-lines.
      const zlib = typeof (e as { code?: unknown }).code === 'string' && (e as { code: string }).code.startsWith('Z_');
      if (!(e instanceof PushProtocolError) && !zlib) throw e;
      const message = zlib ? 'The request body is not valid gzip (Content-Encoding: gzip); send it uncompressed or gzip it whole.' : (e as Error).message;
      return reply.code(400).header('connection', 'close').type('text/plain; charset=utf-8').send(`${message}\n`);
    }
    const setup = await pushHookSetup(ctx, target.project, user, commands);
    const child = spawnGit(['receive-pack', '--stateless-rpc', target.repo.path], { config: setup.config, env: setup.env });
    child.stdin!.on('error', () => undefined);
    body.on('error', () => child.kill());
    if (body.readableEnded) child.stdin!.end(head);
    else {
      child.stdin!.write(head);
      body.pipe(child.stdin!);
      body.resume();
    }
    child.stderr!.resume();
    const out = new PassThrough();
    child.stdout!.pipe(out, { end: false });
    child.on('error', (e) => out.destroy(e));
    killOnAbort(reply, child);
    closeIfBodyUnread(request, reply);
    child.on('close', () => {
      // The response ends only after the push is processed, so a client that sees its push done also sees its events.
      void finishReceivePack(ctx, target.project, user, target.repo, commands, (err, message) => request.log.error({ err }, message))
        .catch((e) => request.log.error({ err: e }, 'push processing failed'))
        .finally(() => {
          void setup.cleanup();
          out.end();
        });
    });
    return reply.code(200).headers(NO_CACHE).type('application/x-git-receive-pack-result').send(out);
  });

}
