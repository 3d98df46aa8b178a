#!/usr/bin/env node
// Launcher: the compiled CLI entry point (npm install builds dist/).
import('../dist/cli/main.js').then((m) => m.main(process.argv));
