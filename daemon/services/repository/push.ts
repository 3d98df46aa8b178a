/**
 * After a push: one entry point (processPush) for every accepted change of refs, whether it came from git over
 * HTTP or from the API (files, commits, branches, tags). It records a push event per ref with GitLab's push data
 * and touches the project in one transaction, with what the listeners write there (hook deliveries, pipelines), then
 * tells the listeners after the commit (merge requests).
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { ProjectRow, UserRow } from '../../db/schema.js';
import { avatarUrl, commitWebUrl, projectUrls } from '../../web-urls.js';
import { isoDate, isZeroSha, type CommitInfo } from '../../git/objects.js';
import type { Repository } from '../../git/repository.js';
import type { ChangedPaths } from '../../git/diff.js';
import { recordEvent } from '../instance/events.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import type { Queries } from '../../db/layer/types.js';
import { notFound } from '../../errors.js';
import { projectNamespace } from '../projects/projects.js';
import { projectRepository } from './repositories.js';
import { getSettings } from '../instance/settings.js';
import { projectHookAttrs, repositoryHookAttrsWithGitUrls } from '../../hooks/project.js';
import { touchProjectActivity } from '../../db/projects.js';

/** One ref change: `before`/`after` are full shas, the zero sha for a created/deleted ref. */
export interface RefUpdate {
  ref: string;
  before: string;
  after: string;
}

/** A commit as push data lists it (GitLab Commit#hook_attrs). */
export interface PushCommit {
  id: string;
  message: string;
  timestamp: string;
  url: string;
  author: { name: string; email: string };
  added: string[];
  modified: string[];
  removed: string[];
}

/** GitLab's push data (Gitlab::DataBuilder::Push), stored on the push event and sent to hooks. */
export interface PushData {
  object_kind: 'push' | 'tag_push';
  event_name: 'push' | 'tag_push';
  before: string;
  after: string;
  ref: string;
  checkout_sha: string | null;
  message: string | null;
  user_id: number;
  user_name: string;
  user_username: string;
  user_email: string;
  user_avatar: string | null;
  project_id: number;
  project: {
    name: string; description: string | null; web_url: string; avatar_url: string | null; git_ssh_url: string; git_http_url: string;
    namespace: string; visibility_level: number; path_with_namespace: string; default_branch: string; homepage: string; url: string;
    ssh_url: string; http_url: string;
  };
  commits: PushCommit[];
  total_commits_count: number;
  repository: { name: string; url: string; description: string | null; homepage: string; git_http_url: string; git_ssh_url: string; visibility_level: number };
}

/** A processed push as listeners see it. */
export interface ProcessedPush {
  project: ProjectRow;
  user: UserRow;
  /** The ref updates, each with its push data. */
  updates: (RefUpdate & { data: PushData })[];
}

/** Something that reacts to pushes (hook deliveries, pipelines, merge request refresh). */
export interface PushListener {
  /** What it does (for readers and logs). */
  name?: string;
  /**
   * Runs inside the push transaction, on either engine: write outbox rows and the like here so they commit with the
   * event. Awaits only `tx` (never git, files or the network).
   */
  inTransactionAsync?(tx: Queries, ctx: AppContext, push: ProcessedPush, prepared?: unknown): Promise<void>;
  /**
   * Runs before the push transaction (may read the repository, which never happens inside a transaction); what it
   * returns is handed to inTransactionAsync as `prepared`. An error is logged and the listener gets undefined.
   */
  prepare?(ctx: AppContext, push: ProcessedPush): Promise<unknown>;
  /** Runs after the commit (may read the repository); errors are logged and never undo the push. */
  afterCommit?(ctx: AppContext, push: ProcessedPush): Promise<void> | void;
}

const listeners: PushListener[] = [];

/** Register a push listener; returns a function that removes it. */
export function onPush(listener: PushListener): () => void {
  listeners.push(listener);
  return () => {
    const i = listeners.indexOf(listener);
    if (i >= 0) listeners.splice(i, 1);
  };
}

/** At most this many commits are listed in push data (newest last), as GitLab did. */
export const PUSH_COMMITS_LIMIT = 20;

/** Commit timestamps as Ruby's xmlschema: ISO 8601 without milliseconds, with the committer's offset. */
const xmlschema = (c: CommitInfo) => isoDate(c.committer).replace(/\.\d{3}(?=[+-])/, '');

/**
 * The commits a ref update brought when the caller already knows them (a merge: the merge commit and the merge request's
 * stored commits): the newest first, at least PUSH_COMMITS_LIMIT of them (or all), and how many there are.
 */
export interface KnownPushCommits {
  newestFirst: string[];
  total: number;
  /**
   * Some of those commits already read, with the paths each changed against its first parent (a merge reads the merge
   * request's commits while git computes the merge): not read again.
   */
  read?: ReadonlyMap<string, { commit: CommitInfo; paths: ChangedPaths }>;
}

async function commitsOf(
  repo: Repository, update: RefUpdate, tag: boolean, known?: KnownPushCommits,
): Promise<{ commits: CommitInfo[]; total: number; message: string | null; checkout: string | null }> {
  if (isZeroSha(update.after)) return { commits: [], total: 0, message: null, checkout: null };
  if (known && !tag) {
    // no walk of the history: the listed commits are read by sha (those not read already)
    const listed = known.newestFirst.slice(0, PUSH_COMMITS_LIMIT);
    const unread = await repo.readCommits(listed.filter((sha) => !known.read?.has(sha)));
    const bySha = new Map(unread.map((c) => [c.sha, c]));
    const commits = listed.map((sha) => known.read?.get(sha)?.commit ?? bySha.get(sha)).filter((c): c is CommitInfo => c !== undefined);
    return { commits: commits.reverse(), total: known.total, message: null, checkout: update.after };
  }
  if (tag) {
    const name = update.ref.slice('refs/tags/'.length);
    const t = await repo.findTag(name);
    const commit = t?.commit ?? (await repo.readCommit(update.after));
    return { commits: commit ? [commit] : [], total: commit ? 1 : 0, message: t?.message ?? null, checkout: commit?.sha ?? null };
  }
  let exclude: string[];
  if (!isZeroSha(update.before)) exclude = [update.before];
  else {
    // A new branch: the commits no other branch has.
    const heads = await repo.refsUnder('refs/heads/');
    exclude = [...heads].filter(([ref]) => ref !== update.ref).map(([, sha]) => sha);
  }
  const { commits, total } = await repo.commitsBetween(update.after, exclude, PUSH_COMMITS_LIMIT);
  return { commits: commits.reverse(), total, message: null, checkout: update.after };
}

/** Build GitLab's push data for one ref update (reads the repository). */
export async function buildPushData(
  ctx: AppContext, project: ProjectRow, user: UserRow, update: RefUpdate, repo = projectRepository(ctx, project), known?: KnownPushCommits,
): Promise<PushData> {
  const [ns, settings] = await Promise.all([projectNamespace(ctx, project), getSettings(ctx)]);
  const urls = projectUrls(ctx, ns, project);
  const tag = update.ref.startsWith('refs/tags/');
  const { commits, total, message, checkout } = await commitsOf(repo, update, tag, known);
  const paths = await repo.changedPathsOfCommits(commits.filter((c) => !known?.read?.has(c.sha)));
  for (const [sha, r] of known?.read ?? []) paths.set(sha, r.paths);
  const pushCommits = commits.map((c) => ({
    id: c.sha, message: c.message, timestamp: xmlschema(c), url: commitWebUrl(urls.web_url, c.sha),
    author: { name: c.author.name, email: c.author.email }, ...(paths.get(c.sha) ?? { added: [], modified: [], removed: [] }),
  }));
  const kind = tag ? 'tag_push' : 'push';
  return {
    object_kind: kind, event_name: kind, before: update.before, after: update.after, ref: update.ref, checkout_sha: checkout, message,
    user_id: user.id, user_name: user.name, user_username: user.username, user_email: user.email, user_avatar: avatarUrl(user, settings.gravatarEnabled),
    project_id: project.id,
    project: projectHookAttrs(ns, project, urls),
    commits: pushCommits,
    total_commits_count: total,
    repository: repositoryHookAttrsWithGitUrls(project, urls),
  };
}

const defaultLog = (err: unknown, message: string) => process.stderr.write(`gantry: ${message}: ${(err as Error)?.message ?? String(err)}\n`);

/** A push with its data built and its listeners' prepare part done: what writePushIn and afterPush take. */
export interface PreparedPush {
  push: ProcessedPush;
  listeners: PushListener[];
  prepared: Map<PushListener, unknown>;
  log: (err: unknown, message: string) => void;
}

/** What processPush is told besides the updates. */
export interface PushOptions {
  log?: (err: unknown, message: string) => void;
  /** The commits of some refs' updates when the caller already knows them (a merge). */
  known?: Map<string, KnownPushCommits>;
}

/**
 * The part of processPush before its transaction: the push data of every update and the listeners' prepare part (both
 * read the repository only). A caller that writes the push inside its own transaction (a merge: its merged state and
 * the push of its target branch commit together) calls this, then writePushIn inside the transaction, then afterPush.
 */
export async function preparePush(ctx: AppContext, project: ProjectRow, user: UserRow, updates: RefUpdate[], opts: PushOptions = {}): Promise<PreparedPush> {
  const repo = projectRepository(ctx, project);
  const withData: ProcessedPush['updates'] = [];
  for (const u of updates) withData.push({ ...u, data: await buildPushData(ctx, project, user, u, repo, opts.known?.get(u.ref)) });
  const push: ProcessedPush = { project, user, updates: withData };
  const log = opts.log ?? defaultLog;
  const active = withData.length ? [...listeners] : [];
  const prepared = new Map<PushListener, unknown>();
  for (const l of active) {
    if (!l.prepare) continue;
    try {
      prepared.set(l, await l.prepare(ctx, push));
    } catch (e) {
      log(e, 'push listener failed');
    }
  }
  return { push, listeners: active, prepared, log };
}

/**
 * The transaction part of a push, inside the caller's transaction: a `pushed` event per ref (with its push data), the
 * project's last_activity_at, and the listeners' in-transaction part (hook deliveries, pipelines, ...).
 */
export async function writePushIn(tx: Queries, ctx: AppContext, p: PreparedPush): Promise<void> {
  const { project, user, updates } = p.push;
  if (!updates.length) return;
  for (const u of updates) await recordEvent(tx, { projectId: project.id, authorId: user.id, action: 'pushed', data: u.data });
  // Never backwards: two pushes through two daemons may commit in the other order than they read the clock.
  await touchProjectActivity(tx, project.id, now());
  for (const l of p.listeners) {
    if (l.inTransactionAsync) await l.inTransactionAsync(tx, ctx, p.push, p.prepared.get(l));
  }
}

/** The listeners' after-commit part of a written push (merge request refresh, ...): errors are logged, never thrown. */
export async function afterPush(ctx: AppContext, p: PreparedPush): Promise<void> {
  for (const l of p.listeners) {
    try {
      await l.afterCommit?.(ctx, p.push);
    } catch (e) {
      p.log(e, 'push listener failed');
    }
  }
}

/**
 * Process accepted ref updates by `user`: the listeners' prepare part (reading the repository), then one transaction
 * records a `pushed` event per ref (with push data), touches last_activity_at and runs the listeners' in-transaction
 * part; then the listeners' after-commit part. A project deleted meanwhile is a 404 `Project Not Found` and writes nothing.
 */
export async function processPush(ctx: AppContext, project: ProjectRow, user: UserRow, updates: RefUpdate[], opts: PushOptions = {}): Promise<ProcessedPush> {
  const p = await preparePush(ctx, project, user, updates, opts);
  if (!p.push.updates.length) return p.push;
  try {
    await ctx.data.transaction((tx) => writePushIn(tx, ctx, p));
  } catch (e) {
    // The project (or the pushing user) was deleted while the push ran: its events have nowhere to go.
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
  await afterPush(ctx, p);
  return p.push;
}
