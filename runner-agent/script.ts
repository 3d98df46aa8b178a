/**
 * Generating the bash scripts of a build, as GitLab Runner's bash shell does: `set -eo pipefail`, and each
 * command echoed in green as `$ <command>` before it runs, so the trace reads like a terminal session.
 */

/** Quote a string for bash as an ANSI-C string ($'...'): safe for any content, including newlines and quotes. */
export function ansiQuote(text: string): string {
  let out = "$'";
  for (const ch of text) {
    const code = ch.codePointAt(0)!;
    if (ch === '\\') out += '\\\\';
    else if (ch === "'") out += "\\'";
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}'`;
}

/** Quote a string for bash in single quotes (for paths and plain values). */
export function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The lines of the `commands` field of a build (before_script + script joined with newlines), trimmed, without blanks. */
export function commandLines(commands: string | string[] | null | undefined): string[] {
  const text = Array.isArray(commands) ? commands.join('\n') : commands ?? '';
  return text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
}

/** Options of generateScript. */
export interface ScriptOptions {
  /** Turn on bash xtrace (CI_DEBUG_TRACE=true). */
  debugTrace?: boolean;
}

/** The green `$ <command>` line GitLab Runner prints before each command. */
export function echoLine(command: string): string {
  return `echo ${ansiQuote(`\x1b[32;1m$ ${command}\x1b[0;m`)}`;
}

/**
 * A bash script that runs `commands` line by line with `set -eo pipefail` (the first failing command ends the
 * script with its exit code), echoing each line first. The script reads nothing from stdin.
 */
export function generateScript(commands: string | string[] | null | undefined, options: ScriptOptions = {}): string {
  const out = ['set -eo pipefail', 'set +o noclobber'];
  if (options.debugTrace) out.push('set -o xtrace');
  for (const line of commandLines(commands)) {
    out.push(echoLine(line));
    out.push(line);
  }
  out.push('exit 0');
  return `${out.join('\n')}\n`;
}

/** Whether a variable value turns on CI_DEBUG_TRACE. */
export function isTrue(value: string | undefined): boolean {
  return value !== undefined && /^(1|true|yes|on)$/i.test(value.trim());
}
