// Copies non-TypeScript assets (SQL migrations) next to the compiled code in dist/.
import { cpSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
mkdirSync(join(root, 'dist/daemon/db'), { recursive: true });
cpSync(join(root, 'daemon/db/migrations'), join(root, 'dist/daemon/db/migrations'), { recursive: true });
