/** Credentials of /ci/api/v1 requests: the `token` param (query, form or JSON body; it wins) and the BUILD-TOKEN header. */
import type { FastifyRequest } from 'fastify';
import type { AppContext } from '../context.js';
import type { CommitStatusRow, RunnerRow } from '../db/schema-ci.js';
import { ApiError, forbidden, notFound } from '../errors.js';
import { findBuild } from '../services/ci/builds.js';
import { buildCredential, safeEqual, type BuildCredential } from '../services/ci/build-tokens.js';
import { hashToken } from '../secrets.js';
import { runnerForToken } from '../services/ci/runners.js';

function field(request: FastifyRequest, name: string): unknown {
  const body = request.body;
  if (body && typeof body === 'object' && !Buffer.isBuffer(body) && name in body) return (body as Record<string, unknown>)[name];
  const query = request.query as Record<string, unknown> | undefined;
  return query?.[name];
}

/** A string request parameter (body first, then query string), or undefined. */
export function param(request: FastifyRequest, name: string): string | undefined {
  const v = field(request, name);
  return typeof v === 'string' && v !== '' ? v : typeof v === 'number' ? String(v) : undefined;
}

/** Any request parameter (body first, then query string). */
export function rawParam(request: FastifyRequest, name: string): unknown {
  return field(request, name);
}

/** The token of a build-level call: the `token` param, else the BUILD-TOKEN header. */
export function buildTokenOf(request: FastifyRequest): string | undefined {
  const h = request.headers['build-token'];
  return param(request, 'token') ?? (typeof h === 'string' && h !== '' ? h : undefined);
}

/** The runner whose token is the `token` param, or 403. */
export async function requireRunner(ctx: AppContext, request: FastifyRequest): Promise<RunnerRow> {
  const runner = await runnerForToken(ctx, param(request, 'token'));
  if (!runner) throw forbidden();
  return runner;
}

/** What a build-level call acts on and how it was authorised. */
export interface BuildAccess {
  build: CommitStatusRow;
  credential: BuildCredential;
  /** The plain build token when the caller sent this build's own token. */
  token: string | undefined;
}

/**
 * Authorise a build-level call (trace, artifacts): 404 when the build does not exist, 403 for a token that is not
 * this build's (a build token is valid only while its build runs; the project's runners token and the token of the
 * runner running it are accepted too). `pipeline` also accepts a running build of the same pipeline (downloads).
 */
export async function requireBuildAccess(ctx: AppContext, request: FastifyRequest, id: number, opts: { pipeline?: boolean } = {}): Promise<BuildAccess> {
  const build = await findBuild(ctx, id);
  if (!build) throw notFound();
  const token = buildTokenOf(request);
  const runner = token ? await runnerForToken(ctx, token) : null;
  const credential = await buildCredential(ctx, build, token, { pipeline: opts.pipeline, runner });
  if (!credential) {
    // This build's own token after it stopped: say so, with its status (a runner aborts on `canceled`).
    if (token && build.tokenHash && safeEqual(hashToken(token), build.tokenHash)) requireRunning(build);
    throw forbidden();
  }
  return { build, credential, token: credential === 'build' ? token : undefined };
}

/** 403 `Build is not running!` (with the build's status in Build-Status so a runner stops) unless it runs. */
export function requireRunning(build: CommitStatusRow): void {
  if (build.status === 'running') return;
  throw new ApiError(403, { message: '403 Forbidden - Build is not running!' }, {
    'Build-Status': build.status,
    Range: `0-${build.traceSize}`,
  });
}

/** 403 `Build has been erased!` for an erased build. */
export function requireNotErased(build: CommitStatusRow): void {
  if (build.erasedAt) throw forbidden('Build has been erased!');
}
