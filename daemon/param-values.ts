/**
 * Loose parameter values that services read as well as routes (settings, project list filters): below every room, so
 * that services need not import api/params.ts.
 */

/** Visibility values of project filters. */
export const VISIBILITY_BY_NAME: Record<string, number> = { private: 0, internal: 10, public: 20 };

const TRUE_WORDS = new Set(['true', 't', '1', 'yes', 'y', 'on']);
const FALSE_WORDS = new Set(['false', 'f', '0', 'no', 'n', 'off']);

/** Map a loosely written boolean to true/false; anything else is returned unchanged (and then fails validation). */
export function normalizeBoolean(value: unknown): unknown {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : value;
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (TRUE_WORDS.has(v)) return true;
  if (FALSE_WORDS.has(v)) return false;
  return value;
}
