/**
 * Protected branches: explicit rules (table protected_branches, names or `*` patterns) plus the default branch,
 * protected by the default_branch_protection setting (0 none, 1 developers push but nobody force pushes or deletes,
 * 2 only masters push). The one place that decides who may push, force push or delete a branch.
 */
import { and, asc, eq } from 'drizzle-orm';
import type { AppContext } from '../context.js';
import { now } from '../context.js';
import type { ProjectRow, UserRow } from '../db/schema.js';
import { protectedBranches, type ProtectedBranchRow } from '../db/schema-git.js';
import { isZeroSha } from '../git/objects.js';
import { branchName } from '../git/refs.js';
import type { RefRule } from '../git/hooks.js';
import { canProject } from '../policy/permissions.js';
import { getSettings } from './settings.js';

/** GitLab's refusal messages, shown by git as `remote: ...` before `(pre-receive hook declined)`. */
export const PROTECTION_MESSAGES = {
  push: 'You are not allowed to push code to protected branches on this project.',
  forcePush: 'You are not allowed to force push code to a protected branch on this project.',
  delete: 'You are not allowed to delete protected branches from this project.',
} as const;

/** default_branch_protection 0: the default branch is not protected. */
export const PROTECTION_NONE = 0;
/** default_branch_protection 1: developers push, nobody force pushes or deletes. */
export const PROTECTION_DEV_CAN_PUSH = 1;
/** default_branch_protection 2: only masters push, nobody force pushes or deletes. */
export const PROTECTION_FULL = 2;

/** The protection in force for one branch name. */
export interface BranchRules {
  protected: boolean;
  developersCanPush: boolean;
  developersCanMerge: boolean;
  /** Where the protection comes from: matching protected_branches rows, the default-branch setting, or nothing. */
  source: 'explicit' | 'default' | null;
}

/** Whether a rule name (exact, or with `*` wildcards) matches a branch name. */
export function ruleMatches(rule: string, branch: string): boolean {
  if (!rule.includes('*')) return rule === branch;
  const re = new RegExp(`^${rule.split('*').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*?')}$`);
  return re.test(branch);
}

/** A project's protected branch rules, sorted by name. */
export function listProtectedBranches(ctx: AppContext, projectId: number): ProtectedBranchRow[] {
  return ctx.db.select().from(protectedBranches).where(eq(protectedBranches.projectId, projectId)).orderBy(asc(protectedBranches.name)).all();
}

/** The rule with exactly this name, or null. */
export function findProtectedBranch(ctx: AppContext, projectId: number, name: string): ProtectedBranchRow | null {
  return ctx.db.select().from(protectedBranches).where(and(eq(protectedBranches.projectId, projectId), eq(protectedBranches.name, name))).get() ?? null;
}

/**
 * Protect a branch (PUT .../branches/:branch/protect). A new rule takes missing flags as false; on an existing rule a
 * missing flag keeps its value (only an explicit false removes developer access), as GitLab 8.12 did.
 */
export function protectBranch(ctx: AppContext, projectId: number, name: string, flags: { developersCanPush?: boolean; developersCanMerge?: boolean } = {}): ProtectedBranchRow {
  const existing = findProtectedBranch(ctx, projectId, name);
  const t = now();
  if (existing) {
    return ctx.db
      .update(protectedBranches)
      .set({
        developersCanPush: flags.developersCanPush ?? existing.developersCanPush,
        developersCanMerge: flags.developersCanMerge ?? existing.developersCanMerge,
        updatedAt: t,
      })
      .where(eq(protectedBranches.id, existing.id))
      .returning()
      .get();
  }
  return ctx.db
    .insert(protectedBranches)
    .values({ projectId, name, developersCanPush: flags.developersCanPush ?? false, developersCanMerge: flags.developersCanMerge ?? false, createdAt: t, updatedAt: t })
    .returning()
    .get();
}

/** Remove the rule with exactly this name; false when there was none. */
export function unprotectBranch(ctx: AppContext, projectId: number, name: string): boolean {
  const r = ctx.db.delete(protectedBranches).where(and(eq(protectedBranches.projectId, projectId), eq(protectedBranches.name, name))).run();
  return r.changes > 0;
}

/**
 * The protection of a branch: matching explicit rules (any rule granting developers access grants it), else the
 * default-branch setting when `branch` is the project's default branch.
 */
export function branchRules(ctx: AppContext, project: ProjectRow, branch: string, rules = listProtectedBranches(ctx, project.id)): BranchRules {
  const matching = rules.filter((r) => ruleMatches(r.name, branch));
  if (matching.length) {
    return {
      protected: true, source: 'explicit',
      developersCanPush: matching.some((r) => r.developersCanPush),
      developersCanMerge: matching.some((r) => r.developersCanMerge),
    };
  }
  const level = getSettings(ctx).defaultBranchProtection;
  if (branch === project.defaultBranch && level !== PROTECTION_NONE) {
    const dev = level === PROTECTION_DEV_CAN_PUSH;
    return { protected: true, source: 'default', developersCanPush: dev, developersCanMerge: dev };
  }
  return { protected: false, source: null, developersCanPush: false, developersCanMerge: false };
}

/** Whether a branch is protected (explicitly or as the protected default branch). */
export function isProtected(ctx: AppContext, project: ProjectRow, branch: string): boolean {
  return branchRules(ctx, project, branch).protected;
}

/** Whether `user` may push commits to `branch` (push_code, and for a protected branch master or developers_can_push). */
export function canPushToBranch(ctx: AppContext, user: UserRow | null, project: ProjectRow, branch: string, rules?: BranchRules): boolean {
  if (!canProject(ctx, user, 'push_code', project)) return false;
  const r = rules ?? branchRules(ctx, project, branch);
  if (!r.protected) return true;
  return canProject(ctx, user, 'push_code_to_protected_branches', project) || r.developersCanPush;
}

/** Whether `user` may merge into `branch` (as pushing, or developers_can_merge on a protected branch). */
export function canMergeIntoBranch(ctx: AppContext, user: UserRow | null, project: ProjectRow, branch: string): boolean {
  const r = branchRules(ctx, project, branch);
  if (canPushToBranch(ctx, user, project, branch, r)) return true;
  return r.protected && r.developersCanMerge && canProject(ctx, user, 'push_code', project);
}

/** One ref update a client asked for. */
export interface RefCommand {
  ref: string;
  oldSha: string;
  newSha: string;
}

/**
 * The pre-receive decision for each ref of a push by `user` (who already has push_code): protected branches refuse
 * deletion always, pushes unless allowed, and force pushes always. Creating the default branch in a repository
 * without it is allowed for developers even when the setting protects it (GitLab protected it after the first push).
 */
export function pushRefRules(ctx: AppContext, project: ProjectRow, user: UserRow, commands: RefCommand[]): Record<string, RefRule> {
  const rows = listProtectedBranches(ctx, project.id);
  const out: Record<string, RefRule> = {};
  for (const c of commands) {
    const branch = branchName(c.ref);
    if (branch === null) {
      out[c.ref] = {};
      continue;
    }
    const r = branchRules(ctx, project, branch, rows);
    const creating = isZeroSha(c.oldSha);
    if (!r.protected || (r.source === 'default' && creating)) out[c.ref] = {};
    else if (isZeroSha(c.newSha)) out[c.ref] = { deny: PROTECTION_MESSAGES.delete };
    else if (!canPushToBranch(ctx, user, project, branch, r)) out[c.ref] = { deny: PROTECTION_MESSAGES.push };
    else out[c.ref] = { forcePush: PROTECTION_MESSAGES.forcePush };
  }
  return out;
}
