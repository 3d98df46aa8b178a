/**
 * The environment gantryd is started with. glibc gives every thread of libuv's pool its own malloc arena and keeps
 * freed memory; one arena and an eager trim keep the daemon's resident set near 100 MB instead of ~160 MB under
 * load (measured in docs/benchmarks.md). A fixed mmap threshold of 32 KiB (set, it no longer moves: glibc's own rises
 * up to 32 MiB after the first large free) serves big buffers (a page of JSON, a kept answer, a result set) from their
 * own mappings, returned to the system when freed, instead of from the heap, where they left ~20 MB resident after a
 * walk over uncached list pages (README, "Memory"). It has a CPU price: SQLite takes 88 KiB for the page cache of every
 * temporary index a statement builds (an `IN (SELECT value FROM json_each(?))` list), and each is then an mmap, page
 * faults and an munmap; list pages join from their id lists instead (Dialect.idList), so they no longer pay it. At
 * 128 KiB (measured before that change) an uncached list page cost 15-25 % less CPU, but the daemon held 127 MB after
 * the API bench (target 120) and 161 MB while serving a 10 MB diff (target 150): docs/decisions.md, "daemon memory".
 * These must be set before the process starts, so every place that starts gantryd (`gantry daemon start`, `npm start`,
 * the launcher's shebang, the systemd unit, the container, the benchmarks) uses them: test/unit/daemon-env.test.ts
 * checks they agree.
 */
export const DAEMON_MALLOC_ENV = { MALLOC_ARENA_MAX: '1', MALLOC_TRIM_THRESHOLD_: '131072', MALLOC_MMAP_THRESHOLD_: '32768' } as const;

/**
 * V8's young generation: semi-spaces that may grow from their starting 1 MB to 2 MB, no further (V8's own bound is 16
 * MB, which the resident set then grows into under load). Kept at 1 MB, the daemon ran a scavenge every few requests
 * of a list page: 2.6x the scavenges of the build before the PostgreSQL port, a part of what an uncached issue or
 * merge request list page cost over it (issue 22 item 8; docs/benchmarks.md, engines). A heap
 * limit is read when V8 starts, so it comes in NODE_OPTIONS (bin/gantryd.js, started without it, keeps the young
 * generation at its starting size instead).
 */
export const DAEMON_NODE_OPTIONS = '--max-semi-space-size=2';

/**
 * Whether V8's young generation has a bound in this process (--max-semi-space-size, in its arguments or NODE_OPTIONS).
 * bin/gantryd.js holds the young generation at its starting size while the daemon boots; once booted, the daemon lets
 * it grow only when it is bounded (daemon/idle-memory.ts).
 */
export function youngGenerationBounded(execArgv: readonly string[], env: NodeJS.ProcessEnv): boolean {
  return `${execArgv.join(' ')} ${env.NODE_OPTIONS ?? ''}`.includes('--max-semi-space-size');
}

/** Everything every starter of gantryd sets: the malloc settings and NODE_OPTIONS (test/unit/daemon-env.test.ts). */
export const DAEMON_ENV = { ...DAEMON_MALLOC_ENV, NODE_OPTIONS: DAEMON_NODE_OPTIONS } as const;

/**
 * The V8 flags the launchers (bin/gantryd.js, the single executable's scripts/sea/gantryd.mjs) set before the daemon's
 * code loads; V8 refuses them in NODE_OPTIONS. test/unit/daemon-env.test.ts checks both launchers set each.
 * - `--semi-space-growth-factor=1`: the young generation stays at its starting size while the daemon boots (the daemon
 *   lets it grow again once booted: daemon/idle-memory.ts).
 * - `--no-allocation-site-pretenuring`: V8 allocates the objects of an allocation site (an object or array literal)
 *   straight into the old generation once, at one scavenge, 85 % of that site's recent objects were still alive. A
 *   presenter's literal that happens to be caught mid-page that way is from then on allocated old for the daemon's
 *   life: its objects, dead a millisecond later, hold the young strings and rows they point to through every scavenge
 *   until the next full collection, which copies those into the old generation too. On uncached issue list pages that
 *   promoted 6.5-7.9 KB a request (1.4 KB with the flag; 25 bytes on the pre-port build, whose requests ran
 *   synchronously; why the site tipped here and not there was not traced) and cost the page a fifth of its CPU (1,874
 *   against 1,510 µs a request, alternated in one run): docs/decisions.md, "V8's allocation-site pretenuring". A
 *   request's objects die young; the caches' few long-lived ones are promoted the usual way.
 */
export const DAEMON_V8_FLAGS = ['--semi-space-growth-factor=1', '--no-allocation-site-pretenuring'] as const;

/** `env` with the daemon's malloc settings added (values the caller already set win) and its NODE_OPTIONS appended. */
export function daemonEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const own = env.NODE_OPTIONS ?? '';
  return { ...DAEMON_MALLOC_ENV, ...env, NODE_OPTIONS: youngGenerationBounded([], env) ? own : `${own} ${DAEMON_NODE_OPTIONS}`.trim() };
}
