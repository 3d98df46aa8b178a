/**
 * The environment gantryd is started with. glibc gives every thread of libuv's pool its own malloc arena and keeps
 * freed memory; one arena and an eager trim keep the daemon's resident set near 100 MB instead of ~160 MB under
 * load (measured in docs/benchmarks.md). These must be set before the process starts, so every place that starts
 * gantryd (`gantry daemon start`, `npm start`, the launcher's shebang, the benchmarks) uses them.
 */
export const DAEMON_MALLOC_ENV = { MALLOC_ARENA_MAX: '1', MALLOC_TRIM_THRESHOLD_: '131072' } as const;

/** `env` with the daemon's malloc settings added (values the caller already set win). */
export function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...DAEMON_MALLOC_ENV, ...env };
}
