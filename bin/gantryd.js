#!/usr/bin/env node
// Launcher: the compiled daemon entry point (npm install builds dist/).
import('../dist/daemon/main.js').then((m) => m.main(process.argv));
