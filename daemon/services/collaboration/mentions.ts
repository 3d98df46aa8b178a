/**
 * `@username` mentions in descriptions and notes.
 * OWNER: todos engineer.
 */
import type { UserRow } from '../../db/schema.js';
import type { Queries } from '../../db/layer/types.js';
import { activeUsersByLowerUsernames } from '../../db/users.js';

/** More names than this in one text are not looked up (a 1 MB note must not become a 100,000-name query). */
const MAX_MENTIONS = 100;

/**
 * A mention: `@` not preceded by a word character, `.`, `-`, `+`, `/` or another `@` (so `bob@example.com` and URL
 * paths are no mention), then a username as GitLab's NAMESPACE_REGEX_STR has it (it never ends in `.`, so a
 * sentence's full stop after `@bob.` is not part of the name).
 */
const MENTION = /(?<![\w.+\-/@])@([a-zA-Z0-9_.][a-zA-Z0-9_.-]*[a-zA-Z0-9_-]|[a-zA-Z0-9_])/g;

/** Fenced code blocks (``` or ~~~ up to the closing fence of the same kind, or the end of the text). */
const FENCED = /^ {0,3}(`{3,}|~{3,})[^\n]*\n[\s\S]*?(?:^ {0,3}\1[^\n]*$|(?![\s\S]))/gm;
/** Inline code spans: a run of backticks up to the same run. */
const INLINE = /(`+)(?!`)[\s\S]*?(?<!`)\1(?!`)/g;

/** The text without its code: fenced blocks, indented blocks (4 spaces or a tab after a blank line) and code spans. */
export function stripCode(text: string): string {
  const withoutFences = text.replace(FENCED, '\n');
  const lines = withoutFences.split('\n');
  let inIndented = false;
  let previousBlank = true;
  const kept: string[] = [];
  for (const line of lines) {
    const blank = line.trim() === '';
    const indented = /^( {4}|\t)/.test(line);
    if (indented && (inIndented || previousBlank)) {
      inIndented = true;
    } else if (!blank) {
      inIndented = false;
      kept.push(line);
    } else {
      kept.push(line);
    }
    previousBlank = blank;
  }
  return kept.join('\n').replace(INLINE, ' ');
}

/** The distinct usernames written as `@username` outside code, in order of first appearance (lower-cased). */
export function mentionedUsernames(text: string | null | undefined): string[] {
  if (!text || !text.includes('@')) return [];
  const names = new Set<string>();
  for (const m of stripCode(text).matchAll(MENTION)) {
    names.add(m[1].toLowerCase());
    if (names.size >= MAX_MENTIONS) break;
  }
  return [...names];
}

/** Active users named by `@username` in the text (unknown names are plain text; code spans and emails ignored). */
export async function mentionedUsers(q: Queries, text: string | null | undefined): Promise<UserRow[]> {
  const names = mentionedUsernames(text);
  if (names.length === 0) return [];
  // the names are lower-cased: lower(username) matches whatever case they were registered with, on both engines
  const rows = await activeUsersByLowerUsernames(q, names);
  const order = new Map(names.map((n, i) => [n, i]));
  return rows.sort((a, b) => (order.get(a.username.toLowerCase()) ?? 0) - (order.get(b.username.toLowerCase()) ?? 0));
}
