/**
 * Writing longer text in the person's editor (as `gh issue create` does): GANTRY_EDITOR, VISUAL, EDITOR, else vi.
 * node:child_process, node:fs and node:os are imported only when an editor is really opened, so commands that never
 * open one do not pay for them.
 */
import { CliError } from './errors.js';
import type { IO } from './io.js';

/** Lines starting with this are instructions and are removed from the text. */
const COMMENT = '#~';

/** The editor command line to run (a shell word list, like `code --wait`). */
export function editorCommand(env: NodeJS.ProcessEnv): string {
  return env.GANTRY_EDITOR || env.VISUAL || env.EDITOR || 'vi';
}

/** Remove the instruction lines and surrounding blank lines. */
export function cleanEditorText(text: string): string {
  return text.split('\n').filter((line) => !line.startsWith(COMMENT)).join('\n').trim();
}

/**
 * Open the editor on a temporary file holding `initial` plus instruction lines; return the text written (instruction
 * lines removed, trimmed). A failing editor is an error; nothing is sent then.
 */
export async function editText(io: IO, what: string, initial = ''): Promise<string> {
  const [{ spawnSync }, fs, os, path] = await Promise.all([import('node:child_process'), import('node:fs'), import('node:os'), import('node:path')]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gantry-edit-'));
  const file = path.join(dir, `${what.replace(/\W+/g, '-')}.md`);
  try {
    fs.writeFileSync(file, `${initial}\n\n${COMMENT} Write the ${what} above (Markdown). Lines starting with ${COMMENT} are removed.\n${COMMENT} An empty ${what} leaves it out.\n`);
    const editor = editorCommand(io.env);
    // through the shell, so EDITOR="code --wait" works as it does for git
    const r = spawnSync('/bin/sh', ['-c', `${editor} "$1"`, 'sh', file], { stdio: 'inherit', env: io.env });
    if (r.error || r.status !== 0) {
      throw new CliError(`the editor (${editor}) failed${r.error ? `: ${r.error.message}` : ` with exit code ${r.status}`}`, 'set GANTRY_EDITOR or EDITOR, or pass the text with --description / --body');
    }
    return cleanEditorText(fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Read the whole of stdin (for `--description-file -`). */
export async function readStdin(io: IO): Promise<string> {
  let text = '';
  io.stdin.setEncoding('utf8');
  for await (const chunk of io.stdin) text += chunk as string;
  return text;
}

/** Text from a file, or stdin for `-`. */
export async function readTextFile(io: IO, file: string): Promise<string> {
  if (file === '-') return readStdin(io);
  const { readFileSync } = await import('node:fs');
  try {
    return readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${file}: ${(e as Error).message}`);
  }
}
