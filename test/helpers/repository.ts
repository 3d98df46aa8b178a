/**
 * Repository fixtures: commits written straight into a project's bare repository with the git module (no work tree,
 * no HTTP), and the authorization-matrix vocabulary shared by the repository API tests.
 */
import type { AppContext } from '../../daemon/context.js';
import type { Repository } from '../../daemon/git/repository.js';
import type { FileChange } from '../../daemon/git/write.js';
import { ensureRepository } from '../../daemon/services/repository/repositories.js';
import type { TestServer, TestUser } from './app.js';
import type { Cast } from './fixtures.js';

/** The project's repository (created on disk if missing). */
export function repositoryOf(ctx: AppContext, projectId: number): Promise<Repository> {
  return ensureRepository(ctx, { id: projectId, defaultBranch: 'master' });
}

/** Files to write: path -> content (a string or Buffer), or null to delete the path. */
export type FileMap = Record<string, string | Buffer | null>;

/**
 * Commit `files` on `branch` (created from `from`, else from nothing, when missing) and return the new sha.
 * Existing paths are updated, absent ones created, null ones deleted.
 */
export async function commitTo(
  ctx: AppContext, projectId: number, branch: string, files: FileMap,
  opts: { message?: string; from?: string; author?: { name: string; email: string }; date?: Date } = {},
): Promise<string> {
  const repo = await repositoryOf(ctx, projectId);
  const head = await repo.resolveBranch(branch);
  const parent = head ?? (opts.from ? await repo.resolveRef(opts.from) : null);
  const changes: FileChange[] = [];
  for (const [path, content] of Object.entries(files)) {
    const exists = parent ? (await repo.entryAt(parent, path)) !== null : false;
    if (content === null) changes.push({ action: 'delete', path });
    else changes.push({ action: exists ? 'update' : 'create', path, content: Buffer.isBuffer(content) ? content : Buffer.from(content) });
  }
  const author = { ...(opts.author ?? { name: 'Fixture Author', email: 'fixture@example.com' }), date: opts.date };
  const r = await repo.createCommit({ branch, parentSha: parent, expectedBranchSha: head, author, message: opts.message ?? `update ${Object.keys(files).join(', ')}`, changes });
  return r.sha;
}

/** Callers of an authorization matrix. */
export type Actor = 'anonymous' | 'nonMember' | 'external' | 'guest' | 'reporter' | 'developer' | 'master' | 'owner' | 'admin';
export const ACTORS: Actor[] = ['anonymous', 'nonMember', 'external', 'guest', 'reporter', 'developer', 'master', 'owner', 'admin'];
export const LEVEL: Record<Actor, number> = { anonymous: 0, nonMember: 0, external: 0, guest: 10, reporter: 20, developer: 30, master: 40, owner: 50, admin: 100 };
export const VISIBILITIES = [0, 10, 20] as const;

/** The user of an actor (null for anonymous). */
export const actorUser = (cast: Cast, a: Actor): TestUser | null => (a === 'anonymous' ? null : cast[a]);

/** Whether an actor sees a project of this visibility at all. */
export function sees(a: Actor, vis: number): boolean {
  if (a === 'anonymous') return false;
  if (LEVEL[a] > 0) return true;
  return a === 'external' ? vis === 20 : vis >= 10;
}

/**
 * The status an actor should get: 401 anonymous, 404 hidden, `ok` with at least `min` access, or when `nonMembers`
 * is set and the project is public (or internal, for users who are not external), since anyone logged in gets the
 * public abilities there (members with a lower level too); else 403.
 */
export function expectedStatus(a: Actor, vis: number, min: number, ok: number, nonMembers = false): number {
  if (a === 'anonymous') return 401;
  if (!sees(a, vis)) return 404;
  if (LEVEL[a] >= min) return ok;
  if (nonMembers && (vis === 20 || (vis === 10 && a !== 'external'))) return ok;
  return 403;
}

/** URL-encoded `namespace/path` of a project (the API accepts it everywhere `:id` is). */
export const encodedPath = (p: { path_with_namespace: string }) => encodeURIComponent(p.path_with_namespace);

/** Push events recorded for a project, newest first (data parsed); through the data layer, on either engine. */
export async function pushEvents(s: TestServer, projectId: number): Promise<{ ref: string; before: string; after: string; object_kind: string; total_commits_count: number }[]> {
  const rows = await s.ctx.data.all<{ data: string }>(`SELECT data FROM events WHERE project_id = ? AND action = 'pushed' ORDER BY id DESC`, [projectId]);
  return rows.map((r) => JSON.parse(r.data));
}
