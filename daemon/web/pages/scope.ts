/**
 * The project of a page and the caller's right to it, decided by the same policy as the API (findProjectWithLevel:
 * 404 absent or hidden, 403 visible without the ability). A browser without a session reads what git over HTTP and
 * what GitLab 8.13's anonymous rules let it read on a public project (code, issues that are not confidential, merge
 * requests, pipelines, builds when they are public: policy anonymousCanProject); anything else sends it to sign in.
 */
import type { AppContext } from '../../context.js';
import type { ProjectRow } from '../../db/schema.js';
import { ApiError } from '../../errors.js';
import { anonymousCanProject, type ProjectAbility } from '../../policy/permissions.js';
import { readableRepository } from '../../services/repository/commits.js';
import { findProjectWithLevel, lookupProjectAsync } from '../../services/projects/projects.js';
import type { Repository } from '../../git/repository.js';
import type { PageContext } from './layout.js';

/** A page refused: 404, 403, or (401) a browser that must sign in first. */
export class PageRefusal extends Error {
  constructor(readonly status: 401 | 403 | 404) {
    super(String(status));
  }
}

/** The project `<ns>/<name>` for the page's reader needing `ability`, or a PageRefusal. */
export async function pageProject(ctx: AppContext, pc: PageContext, ns: string, name: string, ability: ProjectAbility = 'read_project'): Promise<ProjectRow> {
  const path = `${ns}/${name}`;
  if (!pc.viewer) {
    const project = await lookupProjectAsync(ctx, path);
    if (project && anonymousCanProject(ability, project)) return project;
    throw new PageRefusal(401);
  }
  try {
    return (await findProjectWithLevel(ctx, pc.viewer, path, ability)).project;
  } catch (e) {
    if (e instanceof ApiError && (e.statusCode === 404 || e.statusCode === 403)) throw new PageRefusal(e.statusCode);
    throw e;
  }
}

/** The repository of a project with content, or a 404. */
export function pageRepository(ctx: AppContext, project: ProjectRow): Repository {
  const repo = readableRepository(ctx, project);
  if (!repo) throw new PageRefusal(404);
  return repo;
}

/**
 * Split `<ref>/<path>` as GitLab does (a ref may hold slashes): the longest leading part that names a revision is the
 * ref, the rest the path. 404 when no part names one.
 */
export async function splitRefPath(repo: Repository, rest: string): Promise<{ ref: string; sha: string; path: string }> {
  const parts = rest.split('/').filter((p) => p !== '');
  for (let i = parts.length; i >= 1; i--) {
    const ref = parts.slice(0, i).join('/');
    const sha = await repo.resolveRef(ref);
    if (sha) return { ref, sha, path: parts.slice(i).join('/') };
  }
  throw new PageRefusal(404);
}

/** A positive id that fits the integer columns, or a 404 (never a query with it). */
export function pageId(raw: string): number {
  if (!/^\d{1,10}$/.test(raw) || Number(raw) < 1 || Number(raw) > 2147483647) throw new PageRefusal(404);
  return Number(raw);
}
