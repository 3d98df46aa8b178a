/**
 * `gantry mr diff`: a merge request's changes as one unified diff (the text `git diff` prints, so `git apply` takes
 * it), coloured like git's on a terminal and shown through the pager; plain when piped.
 */
import { CliError } from '../errors.js';
import type { IO } from '../io.js';

/** One changed file as the changes endpoint sends it. */
export interface Change {
  old_path: string;
  new_path: string;
  a_mode: string | null;
  b_mode: string | null;
  diff: string;
  new_file: boolean;
  renamed_file: boolean;
  deleted_file: boolean;
  too_large?: boolean;
}

const isNoMode = (m: string | null) => !m || /^0+$/.test(m);

/** The git header lines of one file (`diff --git`, modes, rename), then its patch (commit diffs and MR changes). */
export function fileDiff(c: Change): string {
  const lines = [`diff --git a/${c.old_path} b/${c.new_path}`];
  if (c.new_file) lines.push(`new file mode ${c.b_mode ?? '100644'}`);
  else if (c.deleted_file) lines.push(`deleted file mode ${c.a_mode ?? '100644'}`);
  else if (!isNoMode(c.a_mode) && !isNoMode(c.b_mode) && c.a_mode !== c.b_mode) lines.push(`old mode ${c.a_mode}`, `new mode ${c.b_mode}`);
  if (c.renamed_file) lines.push(`rename from ${c.old_path}`, `rename to ${c.new_path}`);
  let patch = c.diff ?? '';
  if (c.too_large) patch = '';
  // GitLab sends the patch from its `---` line; an answer that starts at the first hunk gets the file lines added.
  if (patch.startsWith('@@')) patch = `--- ${c.new_file ? '/dev/null' : `a/${c.old_path}`}\n+++ ${c.deleted_file ? '/dev/null' : `b/${c.new_path}`}\n${patch}`;
  if (patch && !patch.endsWith('\n')) patch += '\n';
  const text = `${lines.join('\n')}\n${patch}`;
  return c.too_large ? `${text}# diff of ${c.new_path} too large to show\n` : text;
}

/** Every change as one unified diff. */
export function unifiedDiff(changes: Change[]): string {
  return changes.map(fileDiff).join('');
}

const SGR = { bold: '\u001b[1m', cyan: '\u001b[36m', green: '\u001b[32m', red: '\u001b[31m', reset: '\u001b[m' };
const HEADER = /^(diff --git |index |new file mode |deleted file mode |old mode |new mode |rename from |rename to |similarity index |--- |\+\+\+ |Binary files )/;

/** Colour a unified diff as git does: file headers bold, hunk headers cyan, additions green, removals red. */
export function colourDiff(text: string): string {
  let inHeader = false;
  return text.split('\n').map((line) => {
    if (line.startsWith('diff --git ')) inHeader = true;
    else if (line.startsWith('@@')) inHeader = false;
    if (inHeader && HEADER.test(line)) return `${SGR.bold}${line}${SGR.reset}`;
    if (line.startsWith('@@')) {
      const m = /^(@@[^@]*@@)(.*)$/.exec(line);
      return m ? `${SGR.cyan}${m[1]}${SGR.reset}${m[2]}` : `${SGR.cyan}${line}${SGR.reset}`;
    }
    if (line.startsWith('+')) return `${SGR.green}${line}${SGR.reset}`;
    if (line.startsWith('-')) return `${SGR.red}${line}${SGR.reset}`;
    return line;
  }).join('\n');
}

/** The pager command line: GANTRY_PAGER, then PAGER, else `less -R`; empty or `cat` means none. */
export function pagerCommand(env: NodeJS.ProcessEnv): string | null {
  const pager = (env.GANTRY_PAGER ?? env.PAGER ?? 'less -R').trim();
  return pager === '' || pager === 'cat' ? null : pager;
}

/**
 * Show text through the pager (run by the shell, so `PAGER="less -S"` works, with LESS=FRX unless set, as git does:
 * a short text is printed without waiting for `q`). Quitting the pager early is not an error.
 */
export async function page(io: IO, text: string, pager: string): Promise<void> {
  const { spawn } = await import('node:child_process');
  const env = { ...io.env, LESS: io.env.LESS ?? 'FRX', LV: io.env.LV ?? '-c' };
  const child = spawn('/bin/sh', ['-c', pager], { stdio: ['pipe', 'inherit', 'inherit'], env, cwd: io.cwd ?? process.cwd() });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve(code));
  });
  child.stdin.on('error', () => undefined); // the pager quit before reading everything
  child.stdin.end(text);
  const code = await exited;
  if (code === 127) throw new CliError(`the pager (${pager}) was not found`, 'set GANTRY_PAGER or PAGER (or PAGER=cat for none)');
}
