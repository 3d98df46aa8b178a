/**
 * Hints the CI views add to what the API says. GitLab 8.x has no `manual` status: a manual build waits in `skipped`,
 * and its entity does not say `when`, so the CLI reads the pipeline's own .gitlab-ci.yml (at its sha) to tell a
 * manual job from a skipped one, shows it as `manual` and says how to play it. A build that has been pending a while
 * gets the question a person needs: is a runner online that may take it?
 */
import type { ApiClient } from '../client.js';
import { idOrPath } from '../commands/common.js';
import type { Build, Pipeline } from './ci-format.js';

/** How long a build may wait for a runner before the views say so. */
export const STUCK_AFTER_MS = 30_000;

/** The job names of a .gitlab-ci.yml text that are `when: manual` (empty when it does not parse). */
export async function manualJobNames(yamlText: string): Promise<Set<string>> {
  // (the bundle turns yaml into a CommonJS chunk with a default export only)
  const yaml = (await import('yaml')) as typeof import('yaml') & { default?: typeof import('yaml') };
  const parse = yaml.parse ?? yaml.default!.parse;
  let doc: unknown;
  try {
    doc = parse(yamlText, { merge: true });
  } catch {
    return new Set();
  }
  const names = new Set<string>();
  if (!doc || typeof doc !== 'object') return names;
  for (const [name, job] of Object.entries(doc as Record<string, unknown>)) {
    if (name.startsWith('.') || !job || typeof job !== 'object' || Array.isArray(job)) continue;
    if ((job as { when?: unknown }).when === 'manual') names.add(name);
  }
  return names;
}

/**
 * The builds with `manual` as their status where the pipeline's config makes a skipped build a manual one. Reads the
 * config only when a build is skipped; a config that cannot be read changes nothing.
 */
export async function withManualStatus(api: ApiClient, project: string, pipeline: Pipeline, builds: Build[]): Promise<Build[]> {
  if (!builds.some((b) => b.status === 'skipped')) return builds;
  let manual: Set<string>;
  try {
    const file = await api.get<{ content: string }>(`/projects/${idOrPath(project)}/repository/files`, { file_path: '.gitlab-ci.yml', ref: pipeline.sha });
    manual = await manualJobNames(Buffer.from(file.content, 'base64').toString('utf8'));
  } catch {
    return builds;
  }
  return builds.map((b) => (b.status === 'skipped' && manual.has(b.name) ? { ...b, status: 'manual' } : b));
}

/** What to do about manual builds and builds waiting too long for a runner (one line each, for stderr). */
export function ciHints(project: string, builds: readonly Build[], now = Date.now()): string[] {
  const hints: string[] = [];
  for (const b of builds) {
    if (b.status === 'manual') hints.push(`${b.name} #${b.id} is a manual job: start it with \`gantry build play ${project} ${b.id}\``);
  }
  const waiting = builds.filter((b) => b.status === 'pending' && !b.runner && now - Date.parse(b.created_at) > STUCK_AFTER_MS);
  if (waiting.length) {
    const names = waiting.map((b) => `${b.name} #${b.id}`).join(', ');
    hints.push(`${names} ${waiting.length > 1 ? 'have' : 'has'} waited over ${STUCK_AFTER_MS / 1000} s for a runner: is one online that may take ${waiting.length > 1 ? 'them' : 'it'}? `
      + 'Check `gantry runner list` (active, its tags, shared or enabled for this project), or register one: see the README\'s "Runner"');
  }
  return hints;
}
