/** Errors a command reports to the person running it: one message line, an optional hint, an exit code. */

/** Exit codes: 0 success, 1 an error (API, network, local state), 2 wrong usage, 3 `daemon status` found it stopped. */
export const EXIT = { ok: 0, error: 1, usage: 2, stopped: 3 } as const;

/** A failure shown as `gantry: <message>` plus an optional hint line; never a stack trace. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint: string | null = null,
    readonly exitCode: number = EXIT.error,
  ) {
    super(message);
  }
}

/** Wrong usage: a missing or malformed argument (exit code 2). */
export class UsageError extends CliError {
  constructor(message: string, hint: string | null = null) {
    super(message, hint, EXIT.usage);
  }
}
