/**
 * What every transport does around `git receive-pack` (git over HTTP and over SSH): the pre-receive hook's branch
 * protection decisions for the commands of a push, and afterwards the ref updates that took effect, handed to
 * processPush (events, pipelines, hooks, merge request refreshes).
 */
import type { AppContext } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { deferredReceivePackSetup, receivePackSetup, type ReceivePackSetup } from '../../git/hooks.js';
import { isZeroSha } from '../../git/objects.js';
import { validRefName } from '../../git/refs.js';
import type { Repository } from '../../git/repository.js';
import { pushRefRules, type RefCommand } from './protected-branches.js';
import { processPush, type RefUpdate } from './push.js';
import { gitHooksDir } from './repositories.js';

export type { RefCommand } from './protected-branches.js';

/** The -c settings and environment for receive-pack so that its pre-receive hook enforces branch protection. */
export async function pushHookSetup(ctx: AppContext, project: ProjectRow, user: UserRow, commands: RefCommand[]): Promise<ReceivePackSetup> {
  return withPushLimit(ctx, await receivePackSetup(gitHooksDir(ctx), await pushRefRules(ctx, project, user, commands)));
}

/**
 * The same for a receive-pack started before the commands are known (git over SSH): call decide(commands) once they
 * are read, before passing them on to receive-pack.
 */
export async function deferredPushHookSetup(ctx: AppContext, project: ProjectRow, user: UserRow): Promise<ReceivePackSetup & { decide(commands: RefCommand[]): Promise<void> }> {
  const setup = await deferredReceivePackSetup(gitHooksDir(ctx));
  return withPushLimit(ctx, { ...setup, decide: async (commands: RefCommand[]) => setup.decide(await pushRefRules(ctx, project, user, commands)) });
}

/**
 * git's own cap on the pack a push sends (--max-push-size, 0 = none): receive-pack refuses a larger pack with
 * "pack exceeds maximum allowed size", which the client prints, and updates no ref.
 */
function withPushLimit<T extends ReceivePackSetup>(ctx: AppContext, setup: T): T {
  const max = ctx.config.limits.maxPushBytes;
  return max > 0 ? { ...setup, config: { ...setup.config, 'receive.maxInputSize': String(max) } } : setup;
}

/** The commanded updates of branches and tags that took effect (other refs, e.g. refs/notes, change silently). */
export async function appliedRefUpdates(repo: Repository, commands: RefCommand[]): Promise<RefUpdate[]> {
  const updates: RefUpdate[] = [];
  for (const c of commands) {
    if (c.oldSha === c.newSha || !validRefName(c.ref) || !/^refs\/(heads|tags)\//.test(c.ref)) continue;
    const now = await repo.refValue(c.ref);
    const applied = isZeroSha(c.newSha) ? now === null : now === c.newSha;
    if (applied) updates.push({ ref: c.ref, before: c.oldSha, after: c.newSha });
  }
  return updates;
}

/** After receive-pack exited: process the ref updates of `commands` that took effect as a push by `user`. */
export async function finishReceivePack(
  ctx: AppContext,
  project: ProjectRow,
  user: UserRow,
  repo: Repository,
  commands: RefCommand[],
  log: (err: unknown, message: string) => void,
): Promise<void> {
  const updates = await appliedRefUpdates(repo, commands);
  if (updates.length) await processPush(ctx, project, user, updates, { log });
}
