#!/usr/bin/env node
// Launcher: the compiled daemon entry point (npm install builds dist/).
// --optimize-for-size keeps the resident set near 100 MB (GitLab-compatible API in one small process);
// it takes effect when set here, before the daemon's modules load (measured in docs/benchmarks.md).
import { setFlagsFromString } from 'node:v8';
setFlagsFromString('--optimize-for-size');
import('../dist/daemon/main.js').then((m) => m.main(process.argv));
