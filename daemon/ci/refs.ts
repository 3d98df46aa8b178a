// only/except ref filters (GitLab 8.13 Ci::GitlabCiYamlProcessor#process? and #match_ref?).
import { parseRegexpLiteral, rubyRegExp, safeTest } from './ruby-regexp.js';

/** How a pipeline came to be: only 'trigger' matters to the `triggers` keyword (8.13). */
export type PipelineSource = 'push' | 'trigger' | 'api' | 'web';

/** The ref a pipeline runs for, as only/except see it. */
export interface RefContext {
  ref: string;
  tag: boolean;
  source: PipelineSource;
  /** `namespace/project` of the pipeline's project, for `pattern@namespace/project` entries. */
  projectPath?: string;
}

/** The ref filters of a job (undefined or [] = no filter). */
export interface RefFilters {
  only?: readonly string[];
  except?: readonly string[];
}

/**
 * Whether a job is created for this ref: some `only` entry must match (when `only` is given and
 * not empty) and no `except` entry may match. Entries: `branches`, `tags`, `triggers`, `/regex/`
 * (Ruby syntax, unanchored, flags i/m/x allowed), an exact ref name, each optionally suffixed with
 * `@namespace/project` to apply only in that project.
 */
export function jobMatchesRef(job: RefFilters, ctx: RefContext): boolean {
  if (job.only && job.only.length > 0 && !job.only.some((p) => matchRefPattern(p, ctx))) return false;
  if (job.except && job.except.length > 0 && job.except.some((p) => matchRefPattern(p, ctx))) return false;
  return true;
}

/** Whether one only/except entry matches the ref (GitLab 8.13 match_ref?). */
export function matchRefPattern(entry: string, ctx: RefContext): boolean {
  const at = entry.indexOf('@');
  const pattern = at >= 0 ? entry.slice(0, at) : entry;
  if (at >= 0 && entry.slice(at + 1) !== ctx.projectPath) return false;
  if (ctx.tag && pattern === 'tags') return true;
  if (!ctx.tag && pattern === 'branches') return true;
  if (ctx.source === 'trigger' && pattern === 'triggers') return true;
  const lit = parseRegexpLiteral(pattern);
  if (lit) {
    const re = rubyRegExp(lit.source, lit.flags);
    // An uncompilable or runaway pattern matches nothing (config validation rejects the former).
    return re !== null && safeTest(re, ctx.ref, 100) === true;
  }
  return pattern === ctx.ref;
}
