/**
 * The environment gantryd is started with. glibc gives every thread of libuv's pool its own malloc arena and keeps
 * freed memory; one arena and an eager trim keep the daemon's resident set near 100 MB instead of ~160 MB under
 * load (measured in docs/benchmarks.md). A fixed mmap threshold of 32 KiB (glibc raises it up to 32 MiB on its own
 * after the first large free) serves big buffers (a page of JSON, a kept answer, a result set) from their own
 * mappings, returned to the system when freed, instead of from the heap, where they left ~20 MB resident after a walk
 * over uncached list pages (README, "Memory"). These must be set before the process starts, so every place that starts
 * gantryd (`gantry daemon start`, `npm start`, the launcher's shebang, the benchmarks) uses them.
 */
export const DAEMON_MALLOC_ENV = { MALLOC_ARENA_MAX: '1', MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '32768' } as const;

/** `env` with the daemon's malloc settings added (values the caller already set win). */
export function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...DAEMON_MALLOC_ENV, ...env };
}
