#!/usr/bin/env node
// Launcher: the compiled runner agent entry point (npm install builds dist/).
import('../dist/runner-agent/main.js').then((m) => m.main(process.argv));
