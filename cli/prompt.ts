/** Asking the person at the terminal: a secret without echo, a yes/no confirmation, and reading piped stdin. */
import { createInterface } from 'node:readline';
import { CliError } from './errors.js';
import type { IO } from './io.js';

/** Read a line from the terminal without echoing it (stdin must be a TTY). Ctrl-C cancels with exit code 130. */
export function promptSecret(io: IO, question: string): Promise<string> {
  const stdin = io.stdin;
  io.err(question);
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  return new Promise((resolve, reject) => {
    let value = '';
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      io.err('\n');
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') {
          finish();
          resolve(value);
          return;
        }
        if (ch === '\u0003') {
          finish();
          reject(new CliError('cancelled', null, 130));
          return;
        }
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else value += ch;
      }
    };
    stdin.on('data', onData);
  });
}

/** Ask a yes/no question on the terminal; true only for an answer starting with y. */
export async function confirm(io: IO, question: string): Promise<boolean> {
  const rl = createInterface({ input: io.stdin, output: process.stderr, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(`${question} [y/N] `, resolve));
    return /^y/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** Ask for a line on the terminal; an empty answer gives `fallback`. */
export async function ask(io: IO, question: string, fallback = ''): Promise<string> {
  const rl = createInterface({ input: io.stdin, output: process.stderr, terminal: true });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(`${question}${fallback ? ` [${fallback}]` : ''}: `, resolve));
    return answer.trim() || fallback;
  } finally {
    rl.close();
  }
}

/** Read all of stdin and return its first line (for `--password-stdin` / `--token-stdin`). */
export async function readStdinLine(io: IO): Promise<string> {
  let text = '';
  io.stdin.setEncoding('utf8');
  for await (const chunk of io.stdin) text += chunk as string;
  return text.split(/\r?\n/)[0] ?? '';
}
