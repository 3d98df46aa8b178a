// better-sqlite3 inside a single-file executable: its prebuilt linux-x64 addon travels as a file of the unpacked tree
// (scripts/sea/prelude.mjs), loaded once with process.dlopen and handed to every connection through better-sqlite3's
// own `nativeBinding` option, so nothing looks for node_modules. The build resolves `better-sqlite3` to this module.
import { join } from 'node:path';
import Base from 'better-sqlite3/lib/index.js';
import { seaRoot } from './prelude.mjs';

let addon = null;
function binding() {
  if (!addon) {
    const module = { exports: {} };
    process.dlopen(module, join(seaRoot, 'better_sqlite3.node'));
    addon = module.exports;
  }
  return addon;
}

class Database extends Base {
  constructor(filename, options) {
    super(filename, { ...options, nativeBinding: options?.nativeBinding ?? binding() });
  }
}
Database.SqliteError = Base.SqliteError;
export default Database;
export const SqliteError = Base.SqliteError;
