/**
 * Build tokens: a new random token per claimed build, stored only as SHA-256 in commit_statuses.token_hash and
 * valid while the build is running. It authenticates the runner's build-level calls (trace, artifacts), a git clone
 * of the build's project as `gitlab-ci-token:<token>` (read only), and the download of artifacts of builds of the
 * same pipeline (dependencies). Since 8.12 GitLab also accepts the project's runners token where a build token goes.
 */
import { timingSafeEqual } from 'node:crypto';
import { eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { commitStatuses, type CommitStatusRow, type RunnerRow } from '../db/schema-ci.js';
import { hashToken, randomToken } from '../secrets.js';
import { registerGitCredentialResolver } from '../git-http/auth.js';
import { statement } from '../db/statements.js';

/** The git username that carries a build token (GitLab's `gitlab-ci-token`). */
export const CI_TOKEN_USERNAME = 'gitlab-ci-token';

/** A fresh build token and its stored hash. */
export function newBuildToken(): { token: string; hash: string } {
  const token = randomToken(24);
  return { token, hash: hashToken(token) };
}

// Plain tokens of builds claimed by this process, so secrets can be masked in traces sent without the build token
// (PUT carries the runner token). Forgotten when the build stops running; lost on restart (masking is best effort).
const plainTokens = new Map<number, string>();

/** Remember the plain token of a running build (for trace masking). */
export function rememberBuildToken(buildId: number, token: string): void {
  plainTokens.set(buildId, token);
}

/** Forget the plain token of a build that stopped running. */
export function forgetBuildToken(buildId: number): void {
  plainTokens.delete(buildId);
}

/** The plain token of a running build if this process knows it. */
export function knownBuildToken(buildId: number): string | undefined {
  return plainTokens.get(buildId);
}

/** Constant-time string equality (both sides are hashed first, so lengths never leak). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(hashToken(a), 'hex'), Buffer.from(hashToken(b), 'hex'));
}

/** The build (of any status) whose token this is, or null. */
export function buildForToken(ctx: AppContext, token: string | undefined | null): CommitStatusRow | null {
  if (!token) return null;
  const row = statement(ctx, `SELECT id FROM commit_statuses WHERE token_hash = ? AND type = 'build'`)
    .get(hashToken(token)) as { id: number } | undefined;
  if (!row) return null;
  return ctx.db.select().from(commitStatuses).where(eq(commitStatuses.id, row.id)).get() ?? null;
}

/** The id of the project whose runners token this is, or null. */
export function projectForRunnersToken(ctx: AppContext, token: string | undefined | null): number | null {
  if (!token) return null;
  const row = statement(ctx, `SELECT id FROM projects WHERE runners_token_hash = ?`).get(hashToken(token)) as { id: number } | undefined;
  return row?.id ?? null;
}

/** How a build-level call was authenticated. */
export type BuildCredential = 'build' | 'project' | 'runner' | 'pipeline';

/**
 * Whether `token` may act on `build`: its own build token (while it runs), the project's runners token, or the
 * token of the runner that runs it; with `pipeline` also the token of a running build of the same pipeline (artifact
 * downloads of dependencies). Returns how, or null.
 */
export function buildCredential(
  ctx: AppContext,
  build: CommitStatusRow,
  token: string | undefined | null,
  opts: { pipeline?: boolean; runner?: RunnerRow | null } = {},
): BuildCredential | null {
  if (!token) return null;
  const hash = hashToken(token);
  if (build.tokenHash && build.status === 'running' && safeEqual(hash, build.tokenHash)) return 'build';
  if (projectForRunnersToken(ctx, token) === build.projectId) return 'project';
  if (opts.runner && build.runnerId === opts.runner.id) return 'runner';
  if (opts.pipeline) {
    const other = buildForToken(ctx, token);
    if (other && other.status === 'running' && other.pipelineId === build.pipelineId) return 'pipeline';
  }
  return null;
}

/** Replace every occurrence of the build's token and of its project's runners token in a trace by `x`s (same length). */
export function maskSecrets(data: Buffer, secrets: (string | undefined)[]): Buffer {
  let out = data;
  for (const s of secrets) {
    if (!s) continue;
    const needle = Buffer.from(s, 'utf8');
    let i = out.indexOf(needle);
    if (i < 0) continue;
    if (out === data) out = Buffer.from(data);
    while (i >= 0) {
      out.fill(0x78, i, i + needle.length);
      i = out.indexOf(needle, i + needle.length);
    }
  }
  return out;
}

/** The project's runners token (derived from the server secret and the project's salt). */
export function projectRunnersToken(ctx: AppContext, projectId: number): string | undefined {
  const row = statement(ctx, `SELECT runners_token_salt AS salt FROM projects WHERE id = ?`).get(projectId) as { salt: string } | undefined;
  return row ? ctx.secrets.derive('runners', row.salt) : undefined;
}

// git over HTTP: `gitlab-ci-token:<build token>` reads the running build's project; so does its runners token.
registerGitCredentialResolver((ctx, username, password) => {
  if (username !== CI_TOKEN_USERNAME) return undefined;
  const build = buildForToken(ctx, password);
  let projectId: number | null = build && build.status === 'running' ? build.projectId : null;
  if (projectId === null) projectId = projectForRunnersToken(ctx, password);
  if (projectId === null) return null;
  const enabled = statement(ctx, `SELECT builds_enabled AS b FROM projects WHERE id = ?`).get(projectId) as { b: number } | undefined;
  if (!enabled?.b) return null;
  return { user: null, readOnly: true, projectIds: [projectId], ci: true };
});
