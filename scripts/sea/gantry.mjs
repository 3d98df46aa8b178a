// The CLI's single-file executable.
import './prelude.mjs';

const { main } = await import('../../dist/cli/main.js');
await main(process.argv);
