/**
 * Protected branches: explicit rules (table protected_branches, names or `*` patterns) plus the default branch,
 * protected by the default_branch_protection setting (0 none, 1 developers push but nobody force pushes or deletes,
 * 2 only masters push). The one place that decides who may push, force push or delete a branch.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import type { ProtectedBranchRow } from '../../db/schema-git.js';
import { isZeroSha } from '../../git/objects.js';
import { branchName } from '../../git/refs.js';
import type { RefRule } from '../../git/hooks.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import type { Queries } from '../../db/layer/types.js';
import { deleteProtectedBranch, protectedBranchRules, upsertProtectedBranch } from '../../db/git-refs.js';
import { notFound } from '../../errors.js';
import { canProject, projectAccessLevelAsync } from '../../policy/permissions.js';
import { getSettings } from '../instance/settings.js';

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

/** A project's protected branch rules, sorted by name, on the data layer (`q`: ctx.data or a transaction). */
export async function listProtectedBranches(ctx: Pick<AppContext, 'data'>, projectId: number, q: Queries = ctx.data): Promise<ProtectedBranchRow[]> {
  return protectedBranchRules(q, projectId);
}

/**
 * Protect a branch (PUT .../branches/:branch/protect) in one statement: an upsert on the (project, name) key (atomic on
 * both engines), so two daemons protecting one branch at once both succeed with one rule. A new rule takes missing flags
 * as false; on an existing rule a missing flag keeps its value (only an explicit false removes developer access), as
 * GitLab 8.12 did. 404 `Project Not Found` when the project was deleted meanwhile.
 */
export async function protectBranch(
  ctx: Pick<AppContext, 'data'>, projectId: number, name: string, flags: { developersCanPush?: boolean; developersCanMerge?: boolean } = {},
): Promise<ProtectedBranchRow> {
  const t = now();
  const push = flags.developersCanPush ?? null;
  const merge = flags.developersCanMerge ?? null;
  try {
    return await upsertProtectedBranch(ctx.data, projectId, name, push, merge, t);
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
}

/** Remove the rule with exactly this name; false when there was none. */
export async function unprotectBranch(ctx: Pick<AppContext, 'data'>, projectId: number, name: string): Promise<boolean> {
  return deleteProtectedBranch(ctx.data, projectId, name);
}

/**
 * The protection of a branch: matching explicit rules (any rule granting developers access grants it), else the
 * default-branch setting when `branch` is the project's default branch (the rules read when not given).
 */
export async function branchRules(ctx: AppContext, project: ProjectRow, branch: string, rules?: ProtectedBranchRow[]): Promise<BranchRules> {
  const rows = rules ?? (await listProtectedBranches(ctx, project.id));
  return branchRulesOf(project, branch, rows, (await getSettings(ctx)).defaultBranchProtection);
}

/** The protection of a branch given the project's rules and the default_branch_protection setting (no database). */
export function branchRulesOf(project: ProjectRow, branch: string, rules: readonly ProtectedBranchRow[], level: number): BranchRules {
  const matching = rules.filter((r) => ruleMatches(r.name, branch));
  if (matching.length) {
    return {
      protected: true, source: 'explicit',
      developersCanPush: matching.some((r) => r.developersCanPush),
      developersCanMerge: matching.some((r) => r.developersCanMerge),
    };
  }
  if (branch === project.defaultBranch && level !== PROTECTION_NONE) {
    const dev = level === PROTECTION_DEV_CAN_PUSH;
    return { protected: true, source: 'default', developersCanPush: dev, developersCanMerge: dev };
  }
  return { protected: false, source: null, developersCanPush: false, developersCanMerge: false };
}

/** Whether a branch is protected (explicitly or as the protected default branch). */
export async function isProtected(ctx: AppContext, project: ProjectRow, branch: string): Promise<boolean> {
  return (await branchRules(ctx, project, branch)).protected;
}

/** The caller's access level on the project, read once for several ability checks (0 without a user). */
async function levelOf(ctx: AppContext, user: UserRow | null, project: ProjectRow): Promise<number> {
  return user && !user.isAdmin ? projectAccessLevelAsync(ctx, user, project) : 0;
}

/**
 * Whether `user` may push commits to `branch` (push_code, and for a protected branch master or developers_can_push);
 * `level`: the caller's access level when already known.
 */
export async function canPushToBranch(ctx: AppContext, user: UserRow | null, project: ProjectRow, branch: string, rules?: BranchRules, level?: number): Promise<boolean> {
  const lv = level ?? (await levelOf(ctx, user, project));
  if (!canProject(user, 'push_code', project, lv)) return false;
  const r = rules ?? (await branchRules(ctx, project, branch));
  if (!r.protected) return true;
  return canProject(user, 'push_code_to_protected_branches', project, lv) || r.developersCanPush;
}

/** Whether `user` may merge into `branch` (as pushing, or developers_can_merge on a protected branch). */
export async function canMergeIntoBranch(ctx: AppContext, user: UserRow | null, project: ProjectRow, branch: string): Promise<boolean> {
  const r = await branchRules(ctx, project, branch);
  const level = await levelOf(ctx, user, project);
  if (await canPushToBranch(ctx, user, project, branch, r, level)) return true;
  return r.protected && r.developersCanMerge && canProject(user, 'push_code', project, level);
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
export async function pushRefRules(ctx: AppContext, project: ProjectRow, user: UserRow, commands: RefCommand[]): Promise<Record<string, RefRule>> {
  const rows = await listProtectedBranches(ctx, project.id);
  const protection = (await getSettings(ctx)).defaultBranchProtection;
  let level: number | undefined;
  const out: Record<string, RefRule> = {};
  for (const c of commands) {
    const branch = branchName(c.ref);
    if (branch === null) {
      out[c.ref] = {};
      continue;
    }
    const r = branchRulesOf(project, branch, rows, protection);
    const creating = isZeroSha(c.oldSha);
    if (!r.protected || (r.source === 'default' && creating)) out[c.ref] = {};
    else if (isZeroSha(c.newSha)) out[c.ref] = { deny: PROTECTION_MESSAGES.delete };
    else if (!(await canPushToBranch(ctx, user, project, branch, r, (level ??= await levelOf(ctx, user, project))))) out[c.ref] = { deny: PROTECTION_MESSAGES.push };
    else out[c.ref] = { forcePush: PROTECTION_MESSAGES.forcePush };
  }
  return out;
}
