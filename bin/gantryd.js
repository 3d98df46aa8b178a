#!/usr/bin/env -S MALLOC_ARENA_MAX=1 MALLOC_TRIM_THRESHOLD_=131072 node
// Launcher: the bundled daemon, dist/daemon/gantryd.mjs (npm install builds it: tsc, then scripts/bundle-daemon.mjs).
// --optimize-for-size keeps the V8 heap small; it takes effect when set here, before the daemon's modules load.
// The malloc settings in the shebang (also set by `npm start` and `gantry daemon start`, see shared/daemon-env.ts)
// keep native memory small. Together: about 100-120 MB resident under load (docs/benchmarks.md).
import { setFlagsFromString } from 'node:v8';
import { enableCompileCache } from 'node:module';
setFlagsFromString('--optimize-for-size');
// V8's code cache for the one-file bundle (in the OS temp dir): later starts skip compiling it.
enableCompileCache?.();
import('../dist/daemon/gantryd.mjs').then((m) => m.main(process.argv));
