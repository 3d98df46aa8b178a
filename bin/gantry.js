#!/usr/bin/env node
// Launcher: the bundled CLI, dist/bundle/gantry.mjs (npm install builds it: tsc, then scripts/bundle-clients.mjs).
// V8's code cache for the bundle (in the OS temp dir) lets later starts skip compiling it.
import { enableCompileCache } from 'node:module';
enableCompileCache?.();
import('../dist/bundle/gantry.mjs').then((m) => m.main(process.argv));
