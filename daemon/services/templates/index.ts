/** The file templates of `/templates/...` (8.13 lib/api/templates.rb): .gitignore and .gitlab-ci.yml files, and licenses. */
import { GITIGNORES } from './gitignores.js';
import { GITLAB_CI_YMLS } from './gitlab-ci-ymls.js';

export { findLicense, listLicenses, type LicenseTemplate } from './licenses.js';

/** The kinds of plain templates, by their URL segment, with the name 8.13's 404 gives them (`404 gitignore Not Found`). */
export const TEMPLATE_KINDS = {
  gitignores: { texts: GITIGNORES, singular: 'gitignore' },
  gitlab_ci_ymls: { texts: GITLAB_CI_YMLS, singular: 'gitlab_ci_yml' },
} as const;
export type TemplateKind = keyof typeof TEMPLATE_KINDS;

/** The names of a kind's templates, sorted as 8.13 listed its files. */
export function templateNames(kind: TemplateKind): string[] {
  return Object.keys(TEMPLATE_KINDS[kind].texts).sort((a, b) => a.localeCompare(b));
}

/** One template by its exact name, or null. */
export function findTemplate(kind: TemplateKind, name: string): { name: string; content: string } | null {
  const texts: Readonly<Record<string, string>> = TEMPLATE_KINDS[kind].texts;
  return Object.hasOwn(texts, name) ? { name, content: texts[name]! } : null;
}
