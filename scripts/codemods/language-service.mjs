/**
 * What the codemods share (move-files.mjs, drop-async-suffix.mjs): the project's TypeScript, its source files, and a
 * language service over texts held in memory, so that a codemod edits the texts, asks the service again (type errors,
 * renames, imports) and writes the files only at the end.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

/** The project's root (this file is scripts/codemods/language-service.mjs). */
export const root = resolve(new URL('../..', import.meta.url).pathname);
const require = createRequire(join(root, 'package.json'));
/** The project's own TypeScript. */
export const ts = require('typescript');

/** The folders the codemods read and rewrite. */
const DIRS = ['daemon', 'cli', 'runner-agent', 'shared', 'test', 'scripts'];

/** Every file under the project's source folders whose name matches `exts` (never node_modules, dist, dot folders or .d.ts). */
export function sourceFiles(exts = /\.(ts|tsx|mts)$/) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (exts.test(name) && !name.endsWith('.d.ts')) out.push(p);
    }
  };
  for (const d of DIRS) if (existsSync(join(root, d))) walk(join(root, d));
  return out.sort();
}

/**
 * A language service over the project's TypeScript files as texts in memory. `project.files` (the file list),
 * `project.texts` and `project.versions` are the codemod's to change: after changing a text, bump its version
 * (setText does both). `fileExists(f, texts)` and `directoryExists(d, texts)` may replace the host's (a file being moved
 * away no longer exists, a folder it moves into does).
 * `parsed` is tsconfig.json as TypeScript reads it (its fileNames are the files `tsc` checks).
 */
export function createProject({ fileExists, directoryExists } = {}) {
  const configFile = ts.readConfigFile(join(root, 'tsconfig.json'), ts.sys.readFile);
  const parsed = ts.parseJsonConfigFileContent(configFile.config, ts.sys, root);
  const options = { ...parsed.options, noEmit: true };
  const project = {
    parsed,
    files: sourceFiles(),
    texts: new Map(),
    versions: new Map(),
    setText(file, text) {
      project.texts.set(file, text);
      project.versions.set(file, (project.versions.get(file) ?? 0) + 1);
    },
  };
  for (const f of project.files) {
    project.texts.set(f, readFileSync(f, 'utf8'));
    project.versions.set(f, 0);
  }
  const { texts, versions } = project;
  const host = {
    getScriptFileNames: () => project.files,
    getScriptVersion: (f) => String(versions.get(f) ?? 0),
    getScriptSnapshot: (f) => {
      const text = texts.get(f) ?? (existsSync(f) ? readFileSync(f, 'utf8') : undefined);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCurrentDirectory: () => root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
    fileExists: (f) => (fileExists ? fileExists(f, texts) : texts.has(f) || ts.sys.fileExists(f)),
    readFile: (f) => texts.get(f) ?? ts.sys.readFile(f),
    readDirectory: ts.sys.readDirectory,
    directoryExists: (d) => (directoryExists ? directoryExists(d, texts) : ts.sys.directoryExists(d)),
    getDirectories: ts.sys.getDirectories,
  };
  project.service = ts.createLanguageService(host, ts.createDocumentRegistry());
  return project;
}
