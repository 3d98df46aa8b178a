/** The CLI's view of the outside world: output streams, input, environment, and whether they are terminals. */

/** What a command may touch. Tests pass a fake; the real program uses processIO(). */
export interface IO {
  /** Write data to stdout (results, tables, JSON). */
  out(text: string): void;
  /** Write status and error messages to stderr. */
  err(text: string): void;
  env: NodeJS.ProcessEnv;
  stdin: NodeJS.ReadStream;
  stdinIsTTY: boolean;
  stdoutIsTTY: boolean;
  stderrIsTTY: boolean;
  /** The directory local git commands run in (`gantry mr create` inside a clone); default: process.cwd(). */
  cwd?: string;
}

/** The real process streams and environment. */
export function processIO(): IO {
  // A reader that stops early (`gantry issue list | head`) closes the pipe: end quietly, as other CLIs do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw e;
    });
  }
  return {
    out: (text) => void process.stdout.write(text),
    err: (text) => void process.stderr.write(text),
    env: process.env,
    stdin: process.stdin,
    stdinIsTTY: Boolean(process.stdin.isTTY),
    stdoutIsTTY: Boolean(process.stdout.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
  };
}
