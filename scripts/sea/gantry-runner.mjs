// The runner agent's single-file executable.
import './prelude.mjs';

const { main } = await import('../../dist/runner-agent/main.js');
await main(process.argv);
