#!/usr/bin/env -S MALLOC_ARENA_MAX=1 MALLOC_TRIM_THRESHOLD_=131072 MALLOC_MMAP_THRESHOLD_=32768 NODE_OPTIONS=--max-semi-space-size=2 node
// Launcher: the bundled daemon, dist/daemon/gantryd.mjs (npm install builds it: tsc, then scripts/bundle-daemon.mjs).
// The environment in the shebang (also set by `npm start`, `gantry daemon start`, the systemd unit and the container:
// shared/daemon-env.ts) keeps native memory small and V8's young generation at 1-2 MB (--max-semi-space-size=2 in
// NODE_OPTIONS: V8's own bound is 16 MB, which the resident set grows into under load). While the daemon boots, the
// young generation is kept at its starting size (--semi-space-growth-factor=1: it takes effect when set here, before
// the daemon's modules load; booting grew it to its bound, which an idle daemon then held for nothing); once booted,
// the daemon lets it grow again when the bound is set (daemon/idle-memory.ts). Started without that bound
// (`node bin/gantryd.js` with NODE_OPTIONS of one's own), it stays at its starting size on Node 24 (Node 26's V8 grows
// it in steps anyway). (--optimize-for-size
// did the same for the young generation, but also ran memory-reducing mark-compacts several times a minute under load,
// 5-25 ms pauses each, which were the p99 of the API: docs/benchmarks.md.) Together with the idle reclaimer: 88-97 MB
// resident idle, 116 MB right after the API bench's load and 105 MB once idle 10 s (README, "Memory").
import { setFlagsFromString } from 'node:v8';
import { enableCompileCache } from 'node:module';
setFlagsFromString('--semi-space-growth-factor=1');
// Objects of a literal are never allocated straight into the old generation (shared/daemon-env.ts, DAEMON_V8_FLAGS).
setFlagsFromString('--no-allocation-site-pretenuring');
// V8's code cache for the one-file bundle (in the OS temp dir): later starts skip compiling it.
enableCompileCache?.();
import('../dist/daemon/gantryd.mjs').then((m) => m.main(process.argv));
