#!/usr/bin/env node
/**
 * Codemod: move source files into domain folders (docs/STYLE.md: "when a room grows past a handful of files, give its
 * domains folders") with every import of them, and theirs, rewritten by the TypeScript language service
 * (getEditsForFileRename), never by text search. Plain-text mentions of the old paths in Markdown, scripts and
 * comments outside TypeScript (`daemon/services/users.ts`) are rewritten to the new path as text.
 *
 *   node scripts/codemods/move-files.mjs MAP.json            # dry run: the moves and how many files each touches
 *   node scripts/codemods/move-files.mjs MAP.json --write    # move the files (git mv) and rewrite the importers
 *
 * MAP.json is an object of old path -> new path, both relative to the project root (`"daemon/services/builds.ts":
 * "daemon/services/ci/builds.ts"`). The script re-checks the program in memory and refuses to write when the moves
 * add a type error in the files tsconfig covers; test files are rewritten too (they are not type-checked: run them).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { createProject, root, sourceFiles, ts } from './language-service.mjs';

const args = process.argv.slice(2);
const write = args.includes('--write');
const mapPath = args.find((a) => !a.startsWith('--'));
if (!mapPath) {
  console.error('usage: move-files.mjs MAP.json [--write]');
  process.exit(2);
}
const moves = Object.entries(JSON.parse(readFileSync(mapPath, 'utf8'))).map(([from, to]) => [resolve(root, from), resolve(root, to)]);
for (const [from, to] of moves) {
  if (!existsSync(from)) throw new Error(`${relative(root, from)} does not exist`);
  if (existsSync(to)) throw new Error(`${relative(root, to)} exists already`);
}

const project = createProject({
  // a file moved away no longer exists; the folder it moves into does
  fileExists: (f, texts) => texts.has(f) || (!moves.some(([from]) => from === f) && ts.sys.fileExists(f)),
  directoryExists: (d, texts) => [...texts.keys()].some((f) => f.startsWith(d + '/')) || ts.sys.directoryExists(d),
});
const { service, texts, versions, parsed } = project;
const checked = () => parsed.fileNames.map((f) => resolve(f)).map((f) => moves.find(([from]) => from === f)?.[1] ?? f);
const errorCount = () => checked().reduce((n, f) => n + (texts.has(f) ? service.getSemanticDiagnostics(f).length + service.getSyntacticDiagnostics(f).length : 0), 0);

const before = errorCount();
const touched = new Set();
for (const [from, to] of moves) {
  const edits = service.getEditsForFileRename(from, to, {}, { importModuleSpecifierEnding: 'js', allowTextChangesInNewFiles: true });
  let n = 0;
  for (const fileEdit of edits) {
    const f = resolve(fileEdit.fileName);
    const text = texts.get(f);
    if (text === undefined) continue;
    const changes = [...fileEdit.textChanges].sort((a, b) => b.span.start - a.span.start);
    let out = text;
    for (const c of changes) out = out.slice(0, c.span.start) + c.newText + out.slice(c.span.start + c.span.length);
    if (out !== text) {
      project.setText(f, out);
      touched.add(f);
      n++;
    }
  }
  // the file itself now lives at `to`
  texts.set(to, texts.get(from));
  texts.delete(from);
  versions.set(to, (versions.get(from) ?? 0) + 1);
  versions.delete(from);
  project.files = project.files.map((f) => (f === from ? to : f));
  for (const f of [...touched]) if (f === from) { touched.delete(f); touched.add(to); }
  console.log(`${relative(root, from)} -> ${relative(root, to)}: ${n} file(s) rewritten`);
}
const after = errorCount();
if (after > before) {
  console.error(`refusing: the moves add ${after - before} type error(s)`);
  for (const f of checked()) for (const d of texts.has(f) ? service.getSemanticDiagnostics(f) : []) console.error(`${relative(root, f)}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
  process.exit(1);
}
// Plain-text mentions (Markdown, .mjs/.js scripts, JSON, YAML and comments the language service leaves alone).
const textFiles = [...sourceFiles(/\.(md|mjs|js|json|ya?ml|sh)$/), ...['README.md', 'package.json', '.ci/run'].map((f) => join(root, f)).filter(existsSync),
  ...(existsSync(join(root, 'docs')) ? readdirSync(join(root, 'docs'), { recursive: true }).map((f) => join(root, 'docs', String(f))).filter((f) => /\.md$/.test(f)) : [])];
const mentions = new Map();
const replaceMentions = (text) => {
  let out = text;
  for (const [from, to] of moves) {
    const a = relative(root, from);
    const b = relative(root, to);
    // the full path, its built twin under dist/, and the path without its first folder (`services/users.ts`)
    out = out.split(a).join(b).split(`dist/${a.replace(/\.ts$/, '.js')}`).join(`dist/${b.replace(/\.ts$/, '.js')}`);
    const shortA = a.slice(a.indexOf('/') + 1);
    const shortB = b.slice(b.indexOf('/') + 1);
    out = out.replace(new RegExp(`(^|[^\\w/.-])${shortA.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`, 'gm'), (_, pre) => `${pre}${shortB}`);
  }
  return out;
};
for (const f of new Set(textFiles)) {
  const text = readFileSync(f, 'utf8');
  const out = replaceMentions(text);
  if (out !== text) mentions.set(f, out);
}
for (const [f, text] of texts) {
  const out = replaceMentions(text);
  if (out !== text) { texts.set(f, out); touched.add(f); }
}
console.log(`${touched.size} TypeScript file(s) and ${mentions.size} other file(s) rewritten; type errors before ${before}, after ${after}`);
if (!write) process.exit(0);
for (const [from, to] of moves) {
  mkdirSync(dirname(to), { recursive: true });
  execFileSync('git', ['mv', from, to], { cwd: root });
}
for (const f of touched) writeFileSync(f, texts.get(f));
for (const [from, to] of moves) writeFileSync(to, texts.get(to));
for (const [f, text] of mentions) writeFileSync(f, text);
