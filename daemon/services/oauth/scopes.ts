/** OAuth scopes: GitLab 8.x knew one, `api` (full API access as the user), which is also the default. */

/** Scopes Gantry grants, with what each lets an application do (shown on the consent page). */
export const SCOPES: Record<string, string> = {
  api: 'Full access to the API as you: your projects, groups, issues, merge requests, builds and settings, and git over HTTP',
};
/** The scope granted when a request names none. */
export const DEFAULT_SCOPES = 'api';

/** Space- (or comma-) separated scopes as a sorted, de-duplicated list. */
export function parseScopes(text: string | undefined | null): string[] {
  return [...new Set((text ?? '').split(/[\s,]+/).filter(Boolean))].sort();
}

/** The scopes of a list that Gantry does not know. */
export function unknownScopes(scopes: string[]): string[] {
  return scopes.filter((s) => !Object.hasOwn(SCOPES, s));
}
