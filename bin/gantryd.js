#!/usr/bin/env -S MALLOC_ARENA_MAX=1 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=131072 node
// Launcher: the bundled daemon, dist/daemon/gantryd.mjs (npm install builds it: tsc, then scripts/bundle-daemon.mjs).
// --semi-space-growth-factor=1 keeps V8's young generation at its starting size (2 MB) instead of letting it grow to
// 64 MB under load, which keeps the resident set small; it takes effect when set here, before the daemon's modules
// load. (--optimize-for-size did the same for the young generation, but also ran memory-reducing mark-compacts
// several times a minute under load, 5-25 ms pauses each, which were the p99 of the API: docs/benchmarks.md.)
// The malloc settings in the shebang (also set by `npm start` and `gantry daemon start`, see shared/daemon-env.ts)
// keep native memory small. Together: about 100-120 MB resident under load (docs/benchmarks.md).
import { setFlagsFromString } from 'node:v8';
import { enableCompileCache } from 'node:module';
setFlagsFromString('--semi-space-growth-factor=1');
// V8's code cache for the one-file bundle (in the OS temp dir): later starts skip compiling it.
enableCompileCache?.();
import('../dist/daemon/gantryd.mjs').then((m) => m.main(process.argv));
