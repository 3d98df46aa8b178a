/** Option helpers shared by the noun files: connection flags, list flags, integer and visibility parsing. */
import { InvalidArgumentError, type Command } from 'commander';
import type { ConnectionFlags, ListOptions } from '../client.js';

/** The global connection flags as seen from a (sub)command. */
export function connectionFlags(cmd: Command): ConnectionFlags {
  const o = cmd.optsWithGlobals<ConnectionFlags>();
  return { url: o.url, token: o.token, profile: o.profile };
}

/** commander parser for a positive integer option. */
export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
}

/** commander parser for a non-negative integer option. */
export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('must be a whole number (0 or more)');
  return n;
}

const VISIBILITY: Record<string, number> = { private: 0, internal: 10, public: 20, '0': 0, '10': 10, '20': 20 };

/** commander parser for --visibility: private, internal or public (or 0, 10, 20) -> visibility_level. */
export function visibilityLevel(value: string): number {
  const level = VISIBILITY[value.toLowerCase()];
  if (level === undefined) throw new InvalidArgumentError('use private, internal or public');
  return level;
}

/** Add --json, --all, --page and --per-page to a list command. */
export function listFlags(cmd: Command): Command {
  return cmd
    .option('--json', 'print the raw API JSON')
    .option('--all', 'fetch every page (follows X-Next-Page)')
    .option('--page <n>', 'page to show (from 1)', positiveInt)
    .option('--per-page <n>', 'items per page (default 20, at most 100)', positiveInt);
}

/** The listing part of parsed list flags. */
export function listOptions(o: { all?: boolean; page?: number; perPage?: number }): ListOptions {
  return { all: o.all, page: o.page, perPage: o.perPage };
}

/** URL path segment for a resource addressed by id or by path (`group/project` -> `group%2Fproject`). */
export function idOrPath(value: string): string {
  return encodeURIComponent(value.trim());
}
