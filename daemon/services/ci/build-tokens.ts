/**
 * Build tokens: a new random token per claimed build, stored only as SHA-256 in commit_statuses.token_hash and
 * valid while the build is running. It authenticates the runner's build-level calls (trace, artifacts), a git clone
 * of the build's project as `gitlab-ci-token:<token>` (read only), and the download of artifacts of builds of the
 * same pipeline (dependencies). Since 8.12 GitLab also accepts the project's runners token where a build token goes.
 */
import { timingSafeEqual } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { CommitStatusRow, RunnerRow } from '../../db/schema-ci.js';
import { buildByTokenHash, projectIdOfRunnersTokenHash } from '../../db/builds.js';
import { projectById } from '../../db/projects.js';
import { hashToken, randomToken } from '../../secrets.js';
import { registerGitCredentialResolver } from '../../git-http/auth.js';

/** The git username that carries a build token (GitLab's `gitlab-ci-token`). */
export const CI_TOKEN_USERNAME = 'gitlab-ci-token';

/** A fresh build token, its stored hash, and the token sealed with the server secret (kept on the row while it runs). */
export function newBuildToken(ctx: Pick<AppContext, 'secrets'>): { token: string; hash: string; sealed: string } {
  const token = randomToken(24);
  return { token, hash: hashToken(token), sealed: ctx.secrets.seal(token) };
}

/**
 * The plain token of a running build, so secrets can be masked in traces sent without the build token (PUT carries
 * the runner token): opened from the sealed copy on the build row (migration 0028), which every daemon can read; the
 * copy is cleared when the build stops running.
 */
export function knownBuildToken(ctx: Pick<AppContext, 'secrets'>, build: Pick<CommitStatusRow, 'tokenSealed'>): string | undefined {
  if (!build.tokenSealed) return undefined;
  try {
    return ctx.secrets.open(build.tokenSealed);
  } catch {
    return undefined; // sealed with another secret: masking is best effort
  }
}

/** Constant-time string equality (both sides are hashed first, so lengths never leak). */
export function safeEqual(a: string, b: string): boolean {
  return timingSafeEqual(Buffer.from(hashToken(a), 'hex'), Buffer.from(hashToken(b), 'hex'));
}

/** The build (of any status) whose token this is, or null. */
export async function buildForToken(ctx: AppContext, token: string | undefined | null): Promise<CommitStatusRow | null> {
  if (!token) return null;
  return buildByTokenHash(ctx.data, hashToken(token));
}

/** The id of the project whose runners token this is, or null. */
export async function projectForRunnersToken(ctx: AppContext, token: string | undefined | null): Promise<number | null> {
  if (!token) return null;
  return projectIdOfRunnersTokenHash(ctx.data, hashToken(token));
}

/** How a build-level call was authenticated. */
export type BuildCredential = 'build' | 'project' | 'runner' | 'pipeline';

/**
 * Whether `token` may act on `build`: its own build token (while it runs), the project's runners token, or the
 * token of the runner that runs it; with `pipeline` also the token of a running build of the same pipeline (artifact
 * downloads of dependencies). Returns how, or null.
 */
export async function buildCredential(
  ctx: AppContext,
  build: CommitStatusRow,
  token: string | undefined | null,
  opts: { pipeline?: boolean; runner?: RunnerRow | null } = {},
): Promise<BuildCredential | null> {
  if (!token) return null;
  const hash = hashToken(token);
  if (build.tokenHash && build.status === 'running' && safeEqual(hash, build.tokenHash)) return 'build';
  if ((await projectForRunnersToken(ctx, token)) === build.projectId) return 'project';
  if (opts.runner && build.runnerId === opts.runner.id) return 'runner';
  if (opts.pipeline) {
    const other = await buildForToken(ctx, token);
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
export async function projectRunnersToken(ctx: AppContext, projectId: number): Promise<string | undefined> {
  const project = await projectById(ctx.data, projectId);
  return project ? ctx.secrets.derive('runners', project.runnersTokenSalt) : undefined;
}

// git over HTTP: `gitlab-ci-token:<build token>` reads the running build's project; so does its runners token.
registerGitCredentialResolver(async (ctx, username, password) => {
  if (username !== CI_TOKEN_USERNAME) return undefined;
  const build = await buildForToken(ctx, password);
  let projectId: number | null = build && build.status === 'running' ? build.projectId : null;
  if (projectId === null) projectId = await projectForRunnersToken(ctx, password);
  if (projectId === null) return null;
  if (!(await projectById(ctx.data, projectId))?.buildsEnabled) return null;
  return { user: null, readOnly: true, projectIds: [projectId], ci: true };
});
