// Copies non-TypeScript assets (SQL migrations of both engines) next to the compiled code in dist/.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
mkdirSync(join(root, 'dist/daemon/db'), { recursive: true });
cpSync(join(root, 'daemon/db/migrations'), join(root, 'dist/daemon/db/migrations'), { recursive: true });
// The PostgreSQL migrations (daemon/db/migrate-postgres.ts), numbered as the SQLite ones.
cpSync(join(root, 'daemon/db/migrations-postgres'), join(root, 'dist/daemon/db/migrations-postgres'), { recursive: true });
// The git pre-receive hook is plain JavaScript run by node from dist/ (daemon/git/hooks.ts).
cpSync(join(root, 'daemon/git/hooks'), join(root, 'dist/daemon/git/hooks'), { recursive: true });
// The stylesheet of the OAuth sign-in and consent pages (daemon/oauth/index.ts serves it).
mkdirSync(join(root, 'dist/daemon/oauth'), { recursive: true });
cpSync(join(root, 'daemon/oauth/oauth.css'), join(root, 'dist/daemon/oauth/oauth.css'));
// The git revision GET /version reports (daemon/services/instance/version.ts); none outside a git checkout (it says unknown).
try {
  const revision = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  writeFileSync(join(root, 'dist/build-info.json'), `${JSON.stringify({ revision })}\n`);
} catch {
  rmSync(join(root, 'dist/build-info.json'), { force: true });
}
// The stylesheet of the web pages (daemon/web/pages/index.ts serves it).
mkdirSync(join(root, 'dist/daemon/web/pages'), { recursive: true });
cpSync(join(root, 'daemon/web/pages/web.css'), join(root, 'dist/daemon/web/pages/web.css'));
// ... and their one script (daemon/web/pages/live.ts serves it).
cpSync(join(root, 'daemon/web/pages/live-client.js'), join(root, 'dist/daemon/web/pages/live-client.js'));
