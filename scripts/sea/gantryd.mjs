// The daemon's single-file executable. The same executable also serves as git's pre-receive hook program: the hook
// shim execs "$GANTRY_NODE" "$GANTRY_PRE_RECEIVE", and GANTRY_NODE is the daemon's own executable (daemon/git/hooks.ts).
import './prelude.mjs';
import { setFlagsFromString } from 'node:v8';

const hook = process.env.GANTRY_PRE_RECEIVE;
if (hook && process.argv[2] === hook) {
  await import('../../daemon/git/hooks/pre-receive.mjs');
} else {
  // As bin/gantryd.js does: V8's young generation is kept at its starting size while the daemon boots; once booted,
  // the daemon lets it grow again when NODE_OPTIONS bounds it (shared/daemon-env.ts, daemon/idle-memory.ts); and no
  // allocation site is pretenured (shared/daemon-env.ts, DAEMON_V8_FLAGS).
  setFlagsFromString('--semi-space-growth-factor=1');
  setFlagsFromString('--no-allocation-site-pretenuring');
  const { main } = await import('../../dist/daemon/main.js');
  await main(process.argv);
}
