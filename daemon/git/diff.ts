/** Diffs between two trees: per-file paths, modes, flags, stats and patch text (GitLab's RepoDiff, with stats). */
import { runGit } from './command.js';
import { EMPTY_TREE_SHA } from './objects.js';

/** One changed file. */
export interface FileDiff {
  oldPath: string;
  newPath: string;
  /** Old mode as git prints it (`100644`), `0` for a new file. */
  aMode: string;
  /** New mode, `0` for a deleted file. */
  bMode: string;
  oldSha: string;
  newSha: string;
  newFile: boolean;
  renamedFile: boolean;
  deletedFile: boolean;
  binary: boolean;
  additions: number;
  deletions: number;
  /**
   * The patch as GitLab shows it (`RepoDiff.diff`): from the `---` line (or `Binary files ... differ`) on;
   * empty for a pure rename or mode change.
   */
  diff: string;
}

/** Paths a change touched, as GitLab's push data lists them (a renamed file counts as added). */
export interface ChangedPaths {
  added: string[];
  modified: string[];
  removed: string[];
}

/** One record of `diff-tree --raw -z`. */
export interface RawChange {
  aMode: string;
  bMode: string;
  oldSha: string;
  newSha: string;
  status: string;
  oldPath: string;
  newPath: string;
}

/** The flags of every diff-tree Gantry runs: recursive, renames found, no external diff or text conversion, no color. */
export const DIFF_FLAGS = ['-r', '-M', '--no-ext-diff', '--no-textconv', '--no-color'];
/** A file mode as GitLab shows it: `0` for none (a new or deleted file). */
export const mode = (m: string) => (/^0+$/.test(m) ? '0' : m);

/**
 * The `--raw -z` record at tokens[i] (`:<old mode> <new mode> <old sha> <new sha> <status>`, then its path, or the old
 * and the new path of a rename or copy), and the index of its last token.
 */
export function rawRecord(tokens: readonly string[], i: number): { change: RawChange; last: number } {
  const [aMode = '', bMode = '', oldSha = '', newSha = '', status = ''] = tokens[i]!.slice(1).split(' ');
  const two = status.startsWith('R') || status.startsWith('C');
  const oldPath = tokens[i + 1] ?? '';
  const newPath = two ? (tokens[i + 2] ?? '') : oldPath;
  return { change: { aMode, bMode, oldSha, newSha, status, oldPath, newPath }, last: i + (two ? 2 : 1) };
}

/** Put a change in push data's lists: removed, added (new, renamed or copied) or modified. */
function addChangedPath(out: ChangedPaths, c: RawChange): void {
  if (c.status === 'D') out.removed.push(c.oldPath);
  else if (c.status === 'A' || c.status.startsWith('R') || c.status.startsWith('C')) out.added.push(c.newPath);
  else out.modified.push(c.newPath);
}

/** Parse `--raw -z` records (and `--numstat -z` records after them) from diff-tree output. */
function parseRawNumstat(out: Buffer): { changes: RawChange[]; stats: { add: number; del: number; binary: boolean }[] } {
  const tokens = out.toString('utf8').split('\0');
  const changes: RawChange[] = [];
  const stats: { add: number; del: number; binary: boolean }[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === '') continue;
    if (t.startsWith(':')) {
      const { change, last } = rawRecord(tokens, i);
      changes.push(change);
      i = last;
      continue;
    }
    const t1 = t.indexOf('\t');
    const t2 = t.indexOf('\t', t1 + 1);
    const a = t.slice(0, t1);
    const d = t.slice(t1 + 1, t2);
    if (t2 === t.length - 1) i += 2; // a rename: old and new path follow as their own tokens
    stats.push({ add: a === '-' ? 0 : Number(a), del: d === '-' ? 0 : Number(d), binary: a === '-' });
  }
  return { changes, stats };
}

/** GitLab's strip_diff_headers: everything before the first `---` or `Binary` line goes. */
export function stripHeaders(patch: string): string {
  const m = /^(---|Binary)/m.exec(patch);
  return m ? patch.slice(m.index) : '';
}

/** The trees to compare: `from` null means the empty tree (a root commit). */
const endpoints = (from: string | null, to: string) => [from ?? EMPTY_TREE_SHA, to];

/** Diff two tree-ish objects (commit shas); `from` null diffs against the empty tree. Optionally limited to paths. */
export async function diffTrees(gitDir: string, from: string | null, to: string, paths: string[] = []): Promise<FileDiff[]> {
  const [a, b] = endpoints(from, to) as [string, string];
  const pathArgs = paths.length ? ['--', ...paths] : [];
  const [raw, patch] = await Promise.all([
    runGit(['diff-tree', ...DIFF_FLAGS, '--raw', '--numstat', '-z', a, b, ...pathArgs], { gitDir }),
    runGit(['diff-tree', ...DIFF_FLAGS, '-p', a, b, ...pathArgs], { gitDir }),
  ]);
  const { changes, stats } = parseRawNumstat(raw.stdout);
  const patches = patch.stdout.toString('utf8').split(/^(?=diff --git )/m).filter((p) => p.startsWith('diff --git '));
  return changes.map((c, i) => {
    const s = stats[i] ?? { add: 0, del: 0, binary: false };
    const p = patches.length === changes.length ? patches[i]! : '';
    return {
      oldPath: c.oldPath, newPath: c.newPath, aMode: mode(c.aMode), bMode: mode(c.bMode), oldSha: c.oldSha, newSha: c.newSha,
      newFile: c.status === 'A', renamedFile: c.status.startsWith('R'), deletedFile: c.status === 'D',
      binary: s.binary || /^Binary files /m.test(p), additions: s.add, deletions: s.del, diff: stripHeaders(p),
    };
  });
}

/**
 * The paths each commit added, modified and removed against its first parent (or the empty tree), for many commits
 * with one `git diff-tree --stdin` (push data lists up to 20: one process, not 20). Keyed by commit sha.
 */
export async function changedPathsOfCommits(gitDir: string, commits: readonly { sha: string; parents: readonly string[] }[]): Promise<Map<string, ChangedPaths>> {
  const out = new Map<string, ChangedPaths>();
  if (commits.length === 0) return out;
  for (const c of commits) out.set(c.sha, { added: [], modified: [], removed: [] });
  // "<commit> <first parent>" compares the commit with that parent alone; a root commit with --root
  const input = commits.map((c) => (c.parents[0] ? `${c.sha} ${c.parents[0]}` : c.sha)).join('\n') + '\n';
  const { stdout } = await runGit(['diff-tree', '--stdin', '--root', ...DIFF_FLAGS, '--raw', '-z'], { gitDir, input });
  const tokens = stdout.toString('utf8').split('\0');
  let current: ChangedPaths | undefined;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (t === '') continue;
    if (!t.startsWith(':')) {
      current = out.get(t.trim());
      continue;
    }
    const { change, last } = rawRecord(tokens, i);
    i = last;
    if (current) addChangedPath(current, change);
  }
  return out;
}

/** The paths changed between two commits (no patch text): cheap, for push data. */
export async function changedPaths(gitDir: string, from: string | null, to: string): Promise<ChangedPaths> {
  const [a, b] = endpoints(from, to) as [string, string];
  const { stdout } = await runGit(['diff-tree', ...DIFF_FLAGS, '--raw', '-z', a, b], { gitDir });
  const out: ChangedPaths = { added: [], modified: [], removed: [] };
  for (const c of parseRawNumstat(stdout).changes) addChangedPath(out, c);
  return out;
}
