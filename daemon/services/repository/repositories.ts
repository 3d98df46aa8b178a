/**
 * Project repositories: one bare repository per project at `<repositories>/<project id>.git`, created with the
 * project, copied on fork and removed on delete through the storage lifecycle. Importing this module registers
 * the storage handler (daemon/git-http/index.ts imports it, so every built app has it).
 */
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import type { ProjectRow } from '../../db/schema.js';
import { Repository } from '../../git/repository.js';
import { copyBareRepository, initBareRepository, removeBareRepository } from '../../git/lifecycle.js';
import { registerStorage } from './storage.js';

/** The directory of a project's repository. */
export function repositoryPath(ctx: AppContext, projectId: number): string {
  return join(ctx.paths.repositories, `${Math.trunc(projectId)}.git`);
}

/** The Repository of a project (it may not exist on disk yet; see ensureRepository). */
export function projectRepository(ctx: AppContext, project: Pick<ProjectRow, 'id'>): Repository {
  return new Repository(repositoryPath(ctx, project.id));
}

/** The project's repository, created empty first if it is missing (repairs a crash between insert and init). */
export async function ensureRepository(ctx: AppContext, project: Pick<ProjectRow, 'id' | 'defaultBranch'>): Promise<Repository> {
  const repo = projectRepository(ctx, project);
  if (!repo.exists()) await initBareRepository(repo.path, project.defaultBranch);
  return repo;
}

/** The directory holding the server-side hook shim used for pushes. */
export function gitHooksDir(ctx: AppContext): string {
  return join(ctx.paths.data, 'git-hooks');
}

registerStorage({
  created: async (ctx, project) => {
    await initBareRepository(repositoryPath(ctx, project.id), project.defaultBranch);
  },
  forked: async (ctx, source, fork) => {
    await copyBareRepository(repositoryPath(ctx, source.id), repositoryPath(ctx, fork.id), fork.defaultBranch);
  },
  // Repositories are stored by project id, so a rename, path change or transfer moves nothing on disk: no-op by design.
  moved: async () => undefined,
  removed: async (ctx, projectId) => {
    await removeBareRepository(repositoryPath(ctx, projectId));
  },
});
