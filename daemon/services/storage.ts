/** Files a project owns on disk (uploads now; repositories, artifacts and traces as those issues land). */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppContext } from '../context.js';

/** Remove the on-disk storage of deleted projects. Missing directories are fine. */
export async function removeProjectStorage(ctx: AppContext, projectIds: number[]): Promise<void> {
  for (const id of projectIds) {
    await rm(join(ctx.paths.uploads, String(id)), { recursive: true, force: true });
    for (const hook of storageRemovers) await hook(ctx, id);
  }
}

type StorageRemover = (ctx: AppContext, projectId: number) => Promise<void>;
const storageRemovers: StorageRemover[] = [];

/** Register another remover (repositories, artifacts, traces) run for every deleted project. */
export function onProjectStorageRemoved(remover: StorageRemover): void {
  storageRemovers.push(remover);
}
