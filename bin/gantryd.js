#!/usr/bin/env -S MALLOC_ARENA_MAX=1 MALLOC_TRIM_THRESHOLD_=131072 node
// Launcher: the compiled daemon entry point (npm install builds dist/).
// --optimize-for-size keeps the V8 heap small; it takes effect when set here, before the daemon's modules load.
// The malloc settings in the shebang (also set by `npm start` and `gantry daemon start`, see shared/daemon-env.ts)
// keep native memory small. Together: about 100-120 MB resident under load (docs/benchmarks.md).
import { setFlagsFromString } from 'node:v8';
setFlagsFromString('--optimize-for-size');
import('../dist/daemon/main.js').then((m) => m.main(process.argv));
