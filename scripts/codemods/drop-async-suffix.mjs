#!/usr/bin/env node
/**
 * Codemod: drop the `Async` suffix of functions whose synchronous twin is gone (issue 22 item 9, docs/REVIEW.md
 * blemish 2): `recordEventAsync` -> `recordEvent`, with every reference across daemon/, cli/, runner-agent/, shared/,
 * test/ and scripts/ renamed through the TypeScript language service (imports, re-exports, calls, shorthand
 * properties, comments), never by text search.
 *
 *   node scripts/codemods/drop-async-suffix.mjs            # dry run: what would be renamed, what is skipped and why
 *   node scripts/codemods/drop-async-suffix.mjs --write    # rewrite the files
 *   node scripts/codemods/drop-async-suffix.mjs --only recordEventAsync,queueHookDeliveriesAsync --write
 *
 * Renamed: module-level function declarations and `const x = async (...) => ...` / `function` expressions whose name
 * ends in `Async` and is longer than the suffix. Skipped, with the reason printed: a name whose suffix-less form is
 * already an identifier in any file the rename touches (another function, a variable, an import, a property: the twin
 * or a namesake, so renaming could shadow or collide), and a declaration re-exported under an alias. After `--write`
 * run `npx tsc -p tsconfig.json --noEmit` and the tests; the script also re-checks the program in memory and refuses
 * to write when the rename adds a type error in the files tsconfig covers.
 */
import { writeFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { createProject, root, ts } from './language-service.mjs';

const args = process.argv.slice(2);
const write = args.includes('--write');
const onlyIdx = args.indexOf('--only');
const only = onlyIdx >= 0 ? new Set(String(args[onlyIdx + 1] ?? '').split(',').filter(Boolean)) : null;
const SUFFIX = 'Async';

const project = createProject();
const { service, texts, parsed } = project;
const checkedFiles = new Set(parsed.fileNames.map((f) => resolve(f)));

/** The `...Async` declarations of one file: [name, position of the name]. */
function declarations(sf) {
  const out = [];
  for (const st of sf.statements) {
    if (ts.isFunctionDeclaration(st) && st.name && st.body) out.push(st.name);
    else if (ts.isVariableStatement(st)) {
      for (const d of st.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.initializer && (ts.isArrowFunction(d.initializer) || ts.isFunctionExpression(d.initializer))) out.push(d.name);
      }
    }
  }
  return out.filter((n) => n.text.endsWith(SUFFIX) && n.text.length > SUFFIX.length && (!only || only.has(n.text)));
}

/** Every identifier text of a file (the collision check). */
const identifierCache = new Map();
function identifiersOf(file) {
  let set = identifierCache.get(file);
  if (set) return set;
  set = new Set();
  const sf = service.getProgram().getSourceFile(file);
  const visit = (node) => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) set.add(node.text);
    ts.forEachChild(node, visit);
  };
  if (sf) visit(sf);
  identifierCache.set(file, set);
  return set;
}

const program = service.getProgram();
const plans = [];
const skipped = [];
const seen = new Map();
for (const file of project.files) {
  const sf = program.getSourceFile(file);
  if (!sf) continue;
  for (const id of declarations(sf)) {
    const name = id.text;
    const target = name.slice(0, -SUFFIX.length);
    const where = `${relative(root, file)}:${sf.getLineAndCharacterOfPosition(id.getStart()).line + 1}`;
    if (seen.has(name)) {
      skipped.push({ name, where, why: `another declaration of ${name} (${seen.get(name)})` });
      continue;
    }
    seen.set(name, where);
    const locations = service.findRenameLocations(file, id.getStart(), false, true, { providePrefixAndSuffixTextForRename: true }) ?? [];
    const touched = [...new Set(locations.map((l) => l.fileName))];
    const clash = touched.find((f) => identifiersOf(f).has(target));
    if (clash) {
      skipped.push({ name, where, why: `${target} is already an identifier in ${relative(root, clash)}` });
      continue;
    }
    const aliased = locations.find((l) => l.prefixText?.includes(' as ') || l.suffixText?.includes(' as '));
    if (aliased) {
      skipped.push({ name, where, why: `re-exported or imported under an alias in ${relative(root, aliased.fileName)}` });
      continue;
    }
    plans.push({ name, target, where, locations });
  }
}

/** Apply the renames' edits to the texts (per file, from the end so that positions hold). */
const edits = new Map();
for (const p of plans) {
  for (const l of p.locations) {
    const list = edits.get(l.fileName) ?? [];
    list.push({ start: l.textSpan.start, length: l.textSpan.length, text: `${l.prefixText ?? ''}${p.target}${l.suffixText ?? ''}` });
    edits.set(l.fileName, list);
  }
}
const before = new Map();
for (const [file, list] of edits) {
  list.sort((a, b) => b.start - a.start);
  let text = texts.get(file);
  let last = Infinity;
  for (const e of list) {
    if (e.start + e.length > last) throw new Error(`overlapping edits in ${relative(root, file)}`);
    text = text.slice(0, e.start) + e.text + text.slice(e.start + e.length);
    last = e.start;
  }
  before.set(file, texts.get(file));
  project.setText(file, text);
}

for (const p of plans) console.log(`rename ${p.name} -> ${p.target}  (${p.where}; ${p.locations.length} places in ${new Set(p.locations.map((l) => l.fileName)).size} files)`);
for (const s of skipped) console.log(`skip   ${s.name}  (${s.where}): ${s.why}`);
console.log(`${plans.length} renamed, ${skipped.length} skipped, ${edits.size} files changed${write ? '' : ' (dry run: --write to rewrite them)'}`);

// The program again with the new texts: no new type errors in the files tsconfig covers.
const errorsOf = (prog) => new Set(
  ts.getPreEmitDiagnostics(prog).filter((d) => !d.file || checkedFiles.has(resolve(d.file.fileName)))
    .map((d) => `${d.file ? relative(root, d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`),
);
if (write || args.includes('--check')) {
  const oldErrors = errorsOf(program);
  const newErrors = [...errorsOf(service.getProgram())].filter((e) => !oldErrors.has(e));
  if (newErrors.length) {
    console.error(`the rename would add ${newErrors.length} type errors; nothing written:\n${newErrors.slice(0, 20).join('\n')}`);
    process.exit(1);
  }
}
if (write) for (const file of edits.keys()) writeFileSync(file, texts.get(file));
