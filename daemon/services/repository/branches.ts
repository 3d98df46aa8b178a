/**
 * Branches and tags through the API: list and find them (with protection and releases), create and delete them with
 * compare-and-set ref updates that then go through processPush (push and tag_push events, hooks, pipelines), protect
 * and unprotect branches, and tag releases (release notes stored in the releases table).
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { deleteRelease, insertRelease, releasesOfProject, updateReleaseRow } from '../../db/git-refs.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { ReleaseRow } from '../../db/schema-notes.js';
import { badRequestMessage, conflict, notAllowed, notFound, notFoundMessage } from '../../errors.js';
import { RefConflictError } from '../../git/errors.js';
import { ZERO_SHA } from '../../git/objects.js';
import { branchRef, tagRef, validBranchName, validTagName } from '../../git/refs.js';
import type { Branch, Tag } from '../../git/repository.js';
import {
  branchRules, branchRulesOf, listProtectedBranches, protectBranch, pushRefRules, unprotectBranch, type BranchRules,
} from './protected-branches.js';
import { processPush } from './push.js';
import { ensureRepository } from './repositories.js';
import { readableRepository } from './commits.js';
import { getSettings } from '../instance/settings.js';

/** A branch with the protection in force for it. */
export interface BranchWithRules extends Branch {
  rules: BranchRules;
}

/**
 * Why `user` may not create, move or delete `ref` (the branch rules of the pre-receive check, shared with git pushes),
 * or null when allowed. The API only ever moves a branch forward, so an update is never a force push.
 */
export async function refUpdateDenial(ctx: AppContext, project: ProjectRow, user: UserRow, ref: string, change: 'create' | 'update' | 'delete'): Promise<string | null> {
  // Only creation and deletion (zero shas) matter to the rules; any other value stands for "a commit".
  const commit = 'f'.repeat(40);
  const oldSha = change === 'create' ? ZERO_SHA : commit;
  const newSha = change === 'delete' ? ZERO_SHA : commit;
  return (await pushRefRules(ctx, project, user, [{ ref, oldSha, newSha }]))[ref]?.deny ?? null;
}

/** Every branch of the project with its protection, sorted by name (an empty repository has none). */
export async function listBranchesWithRules(ctx: AppContext, project: ProjectRow): Promise<BranchWithRules[]> {
  const repo = readableRepository(ctx, project);
  if (!repo) return [];
  const list = await repo.listBranches();
  const rows = await listProtectedBranches(ctx, project.id);
  const level = (await getSettings(ctx)).defaultBranchProtection;
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((b) => ({ ...b, rules: branchRulesOf(project, b.name, rows, level) }));
}

/** One branch with its protection, or 404 `Branch Not Found`. */
export async function findBranchWithRules(ctx: AppContext, project: ProjectRow, name: string): Promise<BranchWithRules> {
  const repo = readableRepository(ctx, project);
  const branch = repo ? await repo.findBranch(name) : null;
  if (!branch) throw notFound('Branch');
  return { ...branch, rules: await branchRules(ctx, project, name) };
}

/** Create a branch at a ref (branch, tag or sha) as `user` (who has push_code); 400 with GitLab's messages otherwise. */
export async function createBranch(ctx: AppContext, project: ProjectRow, user: UserRow, name: string, ref: string): Promise<BranchWithRules> {
  if (!validBranchName(name)) throw badRequestMessage('Branch name is invalid');
  const repo = await ensureRepository(ctx, project);
  if (await repo.resolveBranch(name)) throw badRequestMessage('Branch already exists');
  const sha = await repo.resolveRef(ref);
  if (!sha) throw badRequestMessage('Invalid reference name');
  const denied = await refUpdateDenial(ctx, project, user, branchRef(name), 'create');
  if (denied) throw badRequestMessage(denied);
  try {
    await repo.createBranch(name, sha);
  } catch (e) {
    if (e instanceof RefConflictError) throw badRequestMessage('Branch already exists');
    throw e;
  }
  await processPush(ctx, project, user, [{ ref: branchRef(name), before: ZERO_SHA, after: sha }]);
  return findBranchWithRules(ctx, project, name);
}

/** Delete a branch: 404 `No such branch`, 405 for the default (HEAD) branch or a protected one. */
export async function deleteBranch(ctx: AppContext, project: ProjectRow, user: UserRow, name: string): Promise<void> {
  const repo = readableRepository(ctx, project);
  const sha = repo && validBranchName(name) ? await repo.refValue(branchRef(name)) : null;
  if (!repo || !sha) throw notFoundMessage('No such branch');
  if (name === project.defaultBranch || name === (await repo.headBranch())) throw notAllowed('Cannot remove HEAD branch');
  if ((await branchRules(ctx, project, name)).protected) throw notAllowed('Protected branch cant be removed');
  try {
    await repo.deleteBranch(name, sha);
  } catch (e) {
    if (e instanceof RefConflictError) throw badRequestMessage('Failed to remove branch');
    throw e;
  }
  await processPush(ctx, project, user, [{ ref: branchRef(name), before: sha, after: ZERO_SHA }]);
}

/** Protect an existing branch by name (flags as protectBranch); 404 `Branch Not Found` when it does not exist. */
export async function protectExistingBranch(ctx: AppContext, project: ProjectRow, name: string, flags: { developersCanPush?: boolean; developersCanMerge?: boolean }): Promise<BranchWithRules> {
  await findBranchWithRules(ctx, project, name);
  await protectBranch(ctx, project.id, name, flags);
  return findBranchWithRules(ctx, project, name);
}

/** Remove the protection rule named exactly like an existing branch (harmless when there is none). */
export async function unprotectExistingBranch(ctx: AppContext, project: ProjectRow, name: string): Promise<BranchWithRules> {
  await findBranchWithRules(ctx, project, name);
  await unprotectBranch(ctx, project.id, name);
  return findBranchWithRules(ctx, project, name);
}

// ---- tags ----------------------------------------------------------------------------------------------------

/** A tag with its release notes (or null). */
export interface TagWithRelease {
  tag: Tag;
  release: ReleaseRow | null;
}

/** The releases of a project by tag name (all of them, or the one of `tagName`). */
async function releasesOf(ctx: AppContext, projectId: number, tagName?: string): Promise<Map<string, ReleaseRow>> {
  return new Map((await releasesOfProject(ctx.data, projectId, tagName)).map((r) => [r.tagName, r]));
}

/** Every tag, sorted by name descending (GitLab 8.x order), with its release. */
export async function listTagsWithReleases(ctx: AppContext, project: ProjectRow): Promise<TagWithRelease[]> {
  const repo = readableRepository(ctx, project);
  if (!repo) return [];
  const tags = (await repo.listTags()).sort((a, b) => (a.name < b.name ? 1 : a.name > b.name ? -1 : 0));
  const rel = tags.length ? await releasesOf(ctx, project.id) : new Map<string, ReleaseRow>();
  return tags.map((tag) => ({ tag, release: rel.get(tag.name) ?? null }));
}

/** One tag with its release, or null. */
export async function findTagWithRelease(ctx: AppContext, project: ProjectRow, name: string): Promise<TagWithRelease | null> {
  const repo = readableRepository(ctx, project);
  const tag = repo && validTagName(name) ? await repo.findTag(name) : null;
  if (!tag) return null;
  return { tag, release: (await releasesOf(ctx, project.id, name)).get(name) ?? null };
}

/** What a new tag needs. */
export interface CreateTagParams {
  name: string;
  ref: string;
  /** Makes an annotated tag (tagger: the caller). */
  message?: string;
  releaseDescription?: string;
}

/** Create a tag (annotated when a message is given) with optional release notes, then process it as a tag push. */
export async function createTag(ctx: AppContext, project: ProjectRow, user: UserRow, p: CreateTagParams): Promise<TagWithRelease> {
  if (!validTagName(p.name)) throw badRequestMessage('Tag name invalid');
  const repo = await ensureRepository(ctx, project);
  if (await repo.refValue(tagRef(p.name))) throw badRequestMessage(`Tag ${p.name} already exists`);
  const target = await repo.resolveRef(p.ref);
  if (!target) throw badRequestMessage(`Target ${p.ref} is invalid`);
  let value: string;
  try {
    value = await repo.createTag(p.name, target, { message: p.message || null, tagger: { name: user.name, email: user.email } });
  } catch (e) {
    if (e instanceof RefConflictError) throw badRequestMessage(`Tag ${p.name} already exists`);
    throw e;
  }
  if (p.releaseDescription) await upsertRelease(ctx, project.id, p.name, p.releaseDescription);
  await processPush(ctx, project, user, [{ ref: tagRef(p.name), before: ZERO_SHA, after: value }]);
  const created = await findTagWithRelease(ctx, project, p.name);
  if (!created) throw notFound('Tag');
  return created;
}

/** Delete a tag (and its release): 404 `No such tag` when it does not exist. */
export async function deleteTag(ctx: AppContext, project: ProjectRow, user: UserRow, name: string): Promise<void> {
  const repo = readableRepository(ctx, project);
  const value = repo && validTagName(name) ? await repo.refValue(tagRef(name)) : null;
  if (!repo || !value) throw notFoundMessage('No such tag');
  try {
    await repo.updateRef(tagRef(name), null, value, `tag: deleted ${name}`);
  } catch (e) {
    if (e instanceof RefConflictError) throw badRequestMessage('Failed to remove tag');
    throw e;
  }
  await deleteRelease(ctx.data, project.id, name);
  await processPush(ctx, project, user, [{ ref: tagRef(name), before: value, after: ZERO_SHA }]);
}

/** Run a release write; a project deleted meanwhile (its foreign key) is a 404, never a 500. */
async function releaseWrite(write: () => Promise<ReleaseRow | null>): Promise<ReleaseRow | null> {
  try {
    return await write();
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
}

async function upsertRelease(ctx: AppContext, projectId: number, tagName: string, description: string): Promise<ReleaseRow> {
  return (await releaseWrite(() => insertRelease(ctx.data, projectId, tagName, description, now(), true)))!;
}

/**
 * Add release notes to a tag: 404 `Tag does not exist`, 409 `Release already exists` (also for the second of two
 * requests at once: the insert does nothing on the (project, tag) key).
 */
export async function createRelease(ctx: AppContext, project: ProjectRow, tagName: string, description: string): Promise<ReleaseRow> {
  const found = await findTagWithRelease(ctx, project, tagName);
  if (!found) throw notFoundMessage('Tag does not exist');
  if (found.release) throw conflict('Release already exists');
  const row = await releaseWrite(() => insertRelease(ctx.data, project.id, tagName, description, now(), false));
  if (!row) throw conflict('Release already exists');
  return row;
}

/** Change the release notes of a tag: 404 `Tag does not exist` or `Release does not exist` (also when deleted meanwhile). */
export async function updateRelease(ctx: AppContext, project: ProjectRow, tagName: string, description: string): Promise<ReleaseRow> {
  const found = await findTagWithRelease(ctx, project, tagName);
  if (!found) throw notFoundMessage('Tag does not exist');
  if (!found.release) throw notFoundMessage('Release does not exist');
  const row = await releaseWrite(() => updateReleaseRow(ctx.data, project.id, tagName, description, now()));
  if (!row) throw notFoundMessage('Release does not exist');
  return row;
}
