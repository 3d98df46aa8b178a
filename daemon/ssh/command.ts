/**
 * What an SSH client asked to run: only `git-upload-pack '<path>'` and `git-receive-pack '<path>'` (also written
 * `git upload-pack`), the path quoted as git quotes it, naming `namespace/project` with an optional leading `/` and
 * `.git`. Pure functions: the path is only ever a key for the project lookup, never a file name.
 */
import { PATH_PATTERN } from '../services/users/users.js';

/** The git services served over SSH. */
export type GitService = 'git-upload-pack' | 'git-receive-pack';

/** A command that runs a git service on a project, or a refusal with the line to show. */
export type SshCommand = { ok: true; service: GitService; path: string } | { ok: false; message: string };

const SERVICES: readonly GitService[] = ['git-upload-pack', 'git-receive-pack'];
/** Longer command lines are refused before any parsing (a path is at most two 255-character names). */
const MAX_COMMAND = 4096;

/** The help that every refusal ends with. */
export const SSH_USAGE = 'Gantry only serves git over SSH: git clone, fetch and push with ssh://git@<host>:<port>/<namespace>/<project>.git';

const refuse = (message: string): SshCommand => ({ ok: false, message });

/**
 * Split a command line into words as a POSIX shell would for the quoting git and its ports use: single quotes,
 * double quotes (with \\ \" \$ \` escapes), backslash escapes and plain characters. Anything a shell would treat
 * specially (variables, globs, pipes, redirections, command substitution) returns null: it is never needed for git.
 */
export function splitCommandLine(line: string): string[] | null {
  const words: string[] = [];
  let word: string | null = null;
  let i = 0;
  const add = (text: string) => {
    word = (word ?? '') + text;
  };
  while (i < line.length) {
    const c = line[i]!;
    if (c === ' ' || c === '\t') {
      if (word !== null) words.push(word);
      word = null;
      i++;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return null;
      add(line.slice(i + 1, end));
      i = end + 1;
    } else if (c === '"') {
      let text = '';
      i++;
      for (;;) {
        if (i >= line.length) return null;
        const d = line[i]!;
        if (d === '"') break;
        if (d === '\\' && i + 1 < line.length && '\\"$`'.includes(line[i + 1]!)) {
          text += line[i + 1];
          i += 2;
        } else if (d === '$' || d === '`') {
          return null;
        } else {
          text += d;
          i++;
        }
      }
      add(text);
      i++;
    } else if (c === '\\') {
      if (i + 1 >= line.length) return null;
      add(line[i + 1]!);
      i += 2;
    } else if (/[A-Za-z0-9_.\-/@+:,%~]/.test(c)) {
      add(c);
      i++;
    } else {
      return null;
    }
  }
  if (word !== null) words.push(word);
  return words;
}

/**
 * The `namespace/project` a git path names (`/ns/project.git`, `ns/project`, a trailing `/` allowed), or null when it
 * is not one: `..` or `.` segments, absolute paths with more than two segments, control characters, NUL.
 */
export function projectPathOf(raw: string): string | null {
  if (raw.length > 600 || /[\u0000-\u001f\u007f\\]/.test(raw)) return null;
  let path = raw.startsWith('/') ? raw.slice(1) : raw;
  if (path.endsWith('/')) path = path.slice(0, -1);
  path = path.replace(/\.git$/i, '');
  const parts = path.split('/');
  if (parts.length !== 2) return null;
  return parts.every((p) => PATH_PATTERN.test(p)) ? parts.join('/') : null;
}

/** Parse the command of an SSH exec request. */
export function parseSshCommand(command: string): SshCommand {
  if (command.length > MAX_COMMAND) return refuse(`This command is too long. ${SSH_USAGE}`);
  if (command.includes('\0')) return refuse(`This command contains a NUL byte. ${SSH_USAGE}`);
  const words = splitCommandLine(command.trim());
  if (!words || words.length === 0) return refuse(`Gantry does not run shell commands. ${SSH_USAGE}`);
  let program = words[0]!;
  let args = words.slice(1);
  if (program === 'git' && args.length > 0) {
    program = `git-${args[0]}`;
    args = args.slice(1);
  }
  const service = SERVICES.find((s) => s === program);
  if (!service) return refuse(`"${printable(words[0]!)}" is not a command Gantry runs. ${SSH_USAGE}`);
  if (args.length !== 1 || args[0]!.startsWith('-')) return refuse(`${service} takes exactly one repository path, such as 'namespace/project.git'.`);
  const path = projectPathOf(args[0]!);
  if (!path) return refuse(`"${printable(args[0]!)}" is not a repository path: use <namespace>/<project>.git, as in the project's ssh_url_to_repo.`);
  return { ok: true, service, path };
}

/** A short, single-line form of client text for messages (no control characters echoed to a terminal). */
export function printable(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]/g, '?');
  return clean.length > 80 ? `${clean.slice(0, 77)}...` : clean;
}
