/**
 * Project storage lifecycle: what exists on disk for a project (uploads here; repositories, artifacts and traces
 * register their own handlers) is created, copied, moved and removed through these hooks, so services that
 * create, fork, rename, transfer or delete projects call one place.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AppContext } from '../../context.js';
import type { ProjectRow } from '../../db/schema.js';

/** Handlers of one storage kind (for example the git repository). */
export interface StorageHandler {
  /** A project was created (before the create is acknowledged). */
  created?(ctx: AppContext, project: ProjectRow): Promise<void>;
  /** A fork was created from `source`. */
  forked?(ctx: AppContext, source: ProjectRow, fork: ProjectRow): Promise<void>;
  /** A project's full path changed (rename, path change or transfer); paths are `namespace/path`. */
  moved?(ctx: AppContext, project: ProjectRow, fromFullPath: string, toFullPath: string): Promise<void>;
  /** A project was deleted. */
  removed?(ctx: AppContext, projectId: number): Promise<void>;
}

const handlers: StorageHandler[] = [
  // (retried when an upload that raced the deletion wrote into the directory meanwhile: ENOTEMPTY; that upload then
  // finds its project gone and removes its file)
  { removed: async (ctx, id) => rm(join(ctx.paths.uploads, String(id)), { recursive: true, force: true, maxRetries: 5, retryDelay: 20 }) },
];

/** Register a storage handler (repositories, artifacts, traces). */
export function registerStorage(handler: StorageHandler): void {
  handlers.push(handler);
}

/** Run the `created` handlers. */
export async function storageCreated(ctx: AppContext, project: ProjectRow): Promise<void> {
  for (const h of handlers) await h.created?.(ctx, project);
}
/** Run the `forked` handlers. */
export async function storageForked(ctx: AppContext, source: ProjectRow, fork: ProjectRow): Promise<void> {
  for (const h of handlers) await h.forked?.(ctx, source, fork);
}
/** Run the `moved` handlers. */
export async function storageMoved(ctx: AppContext, project: ProjectRow, from: string, to: string): Promise<void> {
  if (from === to) return;
  for (const h of handlers) await h.moved?.(ctx, project, from, to);
}
/** Remove the on-disk storage of deleted projects. Missing directories are fine. */
export async function removeProjectStorage(ctx: AppContext, projectIds: number[]): Promise<void> {
  for (const id of projectIds) for (const h of handlers) await h.removed?.(ctx, id);
}
