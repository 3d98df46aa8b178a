/** Reference names: git's check-ref-format rules in plain code (no process), and branch/tag helpers. */

/** Whether a full reference name (`refs/heads/x`) follows git's check-ref-format rules. */
export function validRefName(ref: string): boolean {
  if (!ref || ref === '@' || ref.length > 1024) return false;
  if (ref.startsWith('/') || ref.endsWith('/') || ref.endsWith('.') || ref.includes('//')) return false;
  if (ref.includes('..') || ref.includes('@{') || /[\x00-\x20\x7f~^:?*[\\]/.test(ref)) return false;
  return ref.split('/').every((c) => c !== '' && !c.startsWith('.') && !c.endsWith('.lock'));
}

/** Whether a short branch name is acceptable (as `git branch` checks it: also not `HEAD`, not starting with `-`). */
export function validBranchName(name: string): boolean {
  return name !== 'HEAD' && name !== '@' && !name.startsWith('-') && !name.startsWith('refs/') && validRefName(`refs/heads/${name}`);
}

/** Whether a short tag name is acceptable. */
export function validTagName(name: string): boolean {
  return !name.startsWith('-') && validRefName(`refs/tags/${name}`);
}

/** `refs/heads/<name>`. */
export const branchRef = (name: string) => `refs/heads/${name}`;
/** `refs/tags/<name>`. */
export const tagRef = (name: string) => `refs/tags/${name}`;

/** The branch name of `refs/heads/<name>`, or null for other refs. */
export const branchName = (ref: string) => (ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null);
/** The tag name of `refs/tags/<name>`, or null for other refs. */
export const tagName = (ref: string) => (ref.startsWith('refs/tags/') ? ref.slice('refs/tags/'.length) : null);

/**
 * Whether a user-supplied revision is safe to hand to git as an object name: no newline or NUL (they would break
 * the cat-file protocol), no `:` (it would select a path), not empty, not an option.
 */
export function safeRevision(rev: string): boolean {
  return rev.length > 0 && rev.length <= 1024 && !rev.startsWith('-') && !/[\x00-\x1f\x7f:]/.test(rev);
}
