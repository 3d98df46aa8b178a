/** Child processes of a build: each runs in its own process group so the whole tree can be killed at once. */
import { spawn } from 'node:child_process';

/** How a child process ended. */
export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The process could not be started (e.g. bash or git missing). */
  error?: Error;
}

/** A started child process: its end, and a way to kill it with everything it started. */
export interface RunningProcess {
  pid: number | undefined;
  done: Promise<ProcessResult>;
  /** Kill the whole process group (SIGKILL by default). Safe to call more than once or after the end. */
  kill(signal?: NodeJS.Signals): void;
}

/** Options of startProcess. */
export interface StartOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Every chunk written to stdout or stderr, in the order it arrived. */
  onOutput(chunk: Buffer): void;
}

/** Start `command args` in a new process group with stdin from /dev/null and both outputs sent to onOutput. */
export function startProcess(command: string, args: string[], options: StartOptions): RunningProcess {
  const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let ended = false;
  const done = new Promise<ProcessResult>((resolve) => {
    let result: ProcessResult | null = null;
    let pending = 3; // close of stdout, close of stderr, exit
    const settle = () => {
      if (--pending === 0 && result) {
        ended = true;
        resolve(result);
      }
    };
    child.stdout.on('data', options.onOutput).on('close', settle);
    child.stderr.on('data', options.onOutput).on('close', settle);
    child.on('exit', (code, signal) => {
      result = { code, signal };
      settle();
      // background children that keep the pipes open would hold the build forever: give them a moment, then end them
      setTimeout(() => {
        if (ended || child.pid === undefined) return;
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          /* gone */
        }
        child.stdout.destroy();
        child.stderr.destroy();
      }, 2000).unref();
    });
    child.on('error', (error) => {
      ended = true;
      resolve({ code: null, signal: null, error });
    });
  });
  return {
    pid: child.pid,
    done,
    kill(signal: NodeJS.Signals = 'SIGKILL') {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // the group is gone already; the leader may still need the signal when it never became a group leader
        if (!ended) child.kill(signal);
      }
    },
  };
}
