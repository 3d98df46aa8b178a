/**
 * Diffs with limits (merge request changes): the file list from `diff-tree --raw`, the patch text streamed from
 * `diff-tree -p` and cut as GitLab 8.x cut it (a patch over the per-file limit is dropped and marked too large, and
 * past the total limit every further patch is), so a huge diff costs bounded memory, never an out-of-memory.
 */
import { StringDecoder } from 'node:string_decoder';
import { runGit, spawnGit } from './command.js';
import { EMPTY_TREE_SHA } from './objects.js';
import { DIFF_FLAGS, mode, rawRecord, stripHeaders } from './diff.js';

/** Limits of one diff. */
export interface DiffLimits {
  /** Patch bytes kept per file (8.x Gitlab::Git::Diff: 100 KB). */
  maxFileBytes: number;
  /** Patch bytes kept in all. */
  maxTotalBytes: number;
  /** Files listed at most (the rest are left out and the diff overflows). */
  maxFiles: number;
}

/** Gantry's default limits: 100 KB per file (8.x), 16 MB and 10,000 files per diff. */
export const DEFAULT_DIFF_LIMITS: DiffLimits = { maxFileBytes: 100 * 1024, maxTotalBytes: 16 * 1024 * 1024, maxFiles: 10_000 };

/** One changed file of a limited diff. */
export interface LimitedFileDiff {
  oldPath: string;
  newPath: string;
  aMode: string;
  bMode: string;
  newFile: boolean;
  renamedFile: boolean;
  deletedFile: boolean;
  /** The patch from its `---` (or `Binary files`) line on; empty when too large. */
  diff: string;
  /** The patch was over a limit and left out (8.x `too_large`). */
  tooLarge: boolean;
}

/** A limited diff: the files, and whether files were left out (more than maxFiles). */
export interface LimitedDiff {
  files: LimitedFileDiff[];
  overflow: boolean;
  /** How many files changed in all (counted from the raw list). */
  total: number;
}


/** Parse `--raw -z` output into file entries (at most `max`), counting all of them. */
function parseRaw(out: Buffer, max: number): { files: Omit<LimitedFileDiff, 'diff' | 'tooLarge'>[]; total: number } {
  const tokens = out.toString('utf8').split('\0');
  const files: Omit<LimitedFileDiff, 'diff' | 'tooLarge'>[] = [];
  let total = 0;
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    if (!t.startsWith(':')) continue;
    const { change: c, last } = rawRecord(tokens, i);
    i = last;
    total++;
    if (files.length < max) {
      files.push({
        oldPath: c.oldPath, newPath: c.newPath, aMode: mode(c.aMode), bMode: mode(c.bMode),
        newFile: c.status === 'A', renamedFile: c.status.startsWith('R'), deletedFile: c.status === 'D',
      });
    }
  }
  return { files, total };
}

/**
 * Stream the patch of `from..to` and hand each file's text (or null when over a limit) to `take`, in the order of
 * the raw list. Stops git once `files` patches were read or the total limit was passed.
 */
function streamPatches(gitDir: string, a: string, b: string, files: number, limits: DiffLimits, take: (i: number, text: string | null) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawnGit(['diff-tree', ...DIFF_FLAGS, '-p', a, b], { gitDir, timeoutMs: 120_000, stdio: ['ignore', 'pipe', 'ignore'] });
    const decoder = new StringDecoder('utf8');
    let index = -1;
    let parts: string[] = [];
    let size = 0;
    let dropped = false;
    let total = 0;
    let carry = '';
    let longLine = false;
    let stopped = false;
    const finish = () => {
      if (index < 0 || index >= files) return;
      const text = dropped ? null : parts.join('');
      if (text !== null) total += text.length;
      take(index, text);
    };
    const stop = () => {
      if (stopped) return;
      stopped = true;
      child.kill('SIGKILL');
    };
    const line = (l: string) => {
      if (l.startsWith('diff --git ')) {
        finish();
        index++;
        parts = [];
        size = 0;
        dropped = total >= limits.maxTotalBytes;
        // past the last listed file, or past the total: the rest stays out (too large)
        if (index >= files || dropped) stop();
      }
      if (dropped || index < 0) return;
      size += l.length + 1;
      if (size > limits.maxFileBytes || total + size > limits.maxTotalBytes) {
        dropped = true;
        parts = [];
        return;
      }
      parts.push(l, '\n');
    };
    child.stdout!.on('data', (chunk: Buffer) => {
      if (stopped) return;
      const text = carry + decoder.write(chunk);
      const lines = text.split('\n');
      carry = lines.pop() ?? '';
      for (const l of lines) {
        if (longLine) {
          longLine = false; // the rest of a cut line
          continue;
        }
        line(l);
        if (stopped) return;
      }
      if (carry.length > limits.maxFileBytes) {
        // one enormous line: the file is too large, and the line's rest is skipped up to its newline
        dropped = true;
        parts = [];
        carry = '';
        longLine = true;
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (!stopped) {
        if (carry && !longLine) line(carry);
        finish();
        if (code !== 0 && code !== null) return reject(new Error(`git diff-tree failed with exit code ${code}`));
      } else {
        finish();
      }
      resolve();
    });
  });
}

/** The changes between two commits (`from` null: the empty tree) within `limits`. */
export async function limitedDiff(gitDir: string, from: string | null, to: string, limits: DiffLimits = DEFAULT_DIFF_LIMITS): Promise<LimitedDiff> {
  const a = from ?? EMPTY_TREE_SHA;
  const raw = await runGit(['diff-tree', ...DIFF_FLAGS, '--raw', '-z', a, to], { gitDir, maxOutput: 512 * 1024 * 1024 });
  const { files, total } = parseRaw(raw.stdout, limits.maxFiles);
  const texts: (string | null)[] = new Array(files.length).fill(null);
  if (files.length) await streamPatches(gitDir, a, to, files.length, limits, (i, t) => { texts[i] = t; });
  return {
    files: files.map((f, i) => {
      const t = texts[i];
      return { ...f, diff: t === null || t === undefined ? '' : stripHeaders(t), tooLarge: t === null || t === undefined };
    }),
    overflow: total > files.length,
    total,
  };
}

/** How many files differ between two commits (real_size of a diff version). */
export async function changedFileCount(gitDir: string, from: string | null, to: string): Promise<number> {
  const out = await runGit(['diff-tree', ...DIFF_FLAGS, '--name-only', '-z', from ?? EMPTY_TREE_SHA, to], { gitDir, maxOutput: 512 * 1024 * 1024 });
  return out.stdout.toString('utf8').split('\0').filter((x) => x !== '').length;
}
