/**
 * Diffs in the pages: a file's unified diff (git's text, as the API's `diff` field holds it) shown inline or side by
 * side (`?view=parallel`, a plain link: no script needed), each line with its old and new line numbers and an anchor
 * (`#<file-anchor>_<old>_<new>`, GitLab 8.x's line codes) that a link may point at. The hunks are read from git's own
 * unified format (`@@ -a,b +c,d @@`), every text escaped by the html template.
 */
import { createHash } from 'node:crypto';
import type { FileDiff } from '../../git/diff.js';
import { html, type Html } from './html.js';

/** One line of a hunk: its kind and the old/new line numbers it has (null where it has none). */
interface DiffLine {
  kind: 'add' | 'del' | 'ctx' | 'hunk' | 'meta';
  text: string;
  old: number | null;
  new: number | null;
}

/** The two views; `inline` unless the query asks for `parallel` (GitLab's `view=parallel`). */
export type DiffView = 'inline' | 'parallel';
export const diffViewOf = (query: unknown): DiffView => ((query as Record<string, unknown> | undefined)?.view === 'parallel' ? 'parallel' : 'inline');

const HUNK = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/;

/** The lines of a unified diff with their numbers. */
export function parseUnified(diff: string): DiffLine[] {
  const out: DiffLine[] = [];
  let o = 0;
  let n = 0;
  const lines = diff.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let inHunk = false;
  for (const text of lines) {
    const h = HUNK.exec(text);
    // git's file header (`--- a/x`, `+++ b/x`, `diff --git`, `index`) before the first hunk: the page's heading says it
    if (!h && !inHunk) continue;
    if (h) {
      inHunk = true;
      o = Number(h[1]);
      n = Number(h[2]);
      out.push({ kind: 'hunk', text, old: null, new: null });
    } else if (text.startsWith('+')) out.push({ kind: 'add', text: text.slice(1), old: null, new: n++ });
    else if (text.startsWith('-')) out.push({ kind: 'del', text: text.slice(1), old: o++, new: null });
    else if (text.startsWith('\\')) out.push({ kind: 'meta', text, old: null, new: null });
    else out.push({ kind: 'ctx', text: text.slice(1), old: o++, new: n++ });
  }
  return out;
}

/** GitLab's file anchor: the sha1 of the file's path (what `#<anchor>_<old>_<new>` line codes start with). */
export const fileAnchor = (path: string) => createHash('sha1').update(path).digest('hex');

const num = (anchor: string, l: DiffLine, n: number | null) => (n === null ? html`<td class="ln"></td>` : html`<td class="ln"><a href="#${anchor}_${l.old ?? 0}_${l.new ?? 0}">${n}</a></td>`);
const SIGN = { add: '+', del: '-', ctx: ' ', hunk: '', meta: '' } as const;

function inlineRows(anchor: string, lines: DiffLine[]): Html[] {
  return lines.map((l) => (l.kind === 'hunk' || l.kind === 'meta'
    ? html`<tr class="${l.kind}"><td class="ln"></td><td class="ln"></td><td class="line">${l.text}</td></tr>`
    : html`<tr class="${l.kind}" id="${anchor}_${l.old ?? 0}_${l.new ?? 0}">${num(anchor, l, l.old)}${num(anchor, l, l.new)}<td class="line" data-sign="${SIGN[l.kind]}">${l.text}</td></tr>`));
}

/** Side by side: removed lines on the left paired with the added lines that follow them on the right. */
function parallelRows(anchor: string, lines: DiffLine[]): Html[] {
  const rows: Html[] = [];
  const cell = (l: DiffLine | undefined, side: 'old' | 'new') => (l
    ? html`${num(anchor, l, l[side])}<td class="line ${l.kind}" id="${anchor}_${l.old ?? 0}_${l.new ?? 0}${side === 'old' && l.kind === 'ctx' ? '_l' : ''}">${l.text}</td>`
    : html`<td class="ln empty"></td><td class="line empty"></td>`);
  for (let i = 0; i < lines.length;) {
    const l = lines[i]!;
    if (l.kind === 'hunk' || l.kind === 'meta') {
      rows.push(html`<tr class="${l.kind}"><td class="ln"></td><td class="line" colspan="3">${l.text}</td></tr>`);
      i++;
    } else if (l.kind === 'ctx') {
      rows.push(html`<tr class="ctx">${cell(l, 'old')}${cell(l, 'new')}</tr>`);
      i++;
    } else {
      const dels: DiffLine[] = [];
      const adds: DiffLine[] = [];
      while (lines[i]?.kind === 'del') dels.push(lines[i++]!);
      while (lines[i]?.kind === 'add') adds.push(lines[i++]!);
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push(html`<tr>${cell(dels[k], 'old')}${cell(adds[k], 'new')}</tr>`);
    }
  }
  return rows;
}

/** A file's diff in the chosen view (a table; binary files and diffs too large to show say so). */
export function diffTable(d: Pick<FileDiff, 'diff' | 'newPath'> & { binary?: boolean; tooLarge?: boolean }, view: DiffView): Html {
  if (d.binary) return html`<p class="muted">Binary file</p>`;
  if (d.tooLarge) return html`<p class="muted">This diff is too large to show.</p>`;
  if (!d.diff) return html`<p class="muted">No changes to the content.</p>`;
  const anchor = fileAnchor(d.newPath);
  const lines = parseUnified(d.diff);
  return view === 'parallel'
    ? html`<div class="diff-scroll"><table class="diff parallel"><tbody>${parallelRows(anchor, lines)}</tbody></table></div>`
    : html`<div class="diff-scroll"><table class="diff"><tbody>${inlineRows(anchor, lines)}</tbody></table></div>`;
}

/** Files of a diff shown a page (`?files_page=`): a 1,000-file change is 20 light pages, not one of megabytes. */
export const DIFF_FILES_PER_PAGE = 50;

/**
 * Every file's diff with its heading (path, rename, +/-), one page of files (`?files_page=`), with the
 * inline/side-by-side switch above them (`?view=`); each link keeps the other choice.
 */
export function diffFiles(
  files: (Pick<FileDiff, 'diff' | 'oldPath' | 'newPath' | 'renamedFile' | 'newFile' | 'deletedFile'> & { binary?: boolean; additions?: number; deletions?: number; tooLarge?: boolean })[],
  query: unknown,
): Html {
  const view = diffViewOf(query);
  const raw = (query as Record<string, unknown> | undefined)?.files_page;
  const pages = Math.max(1, Math.ceil(files.length / DIFF_FILES_PER_PAGE));
  const page = typeof raw === 'string' && /^\d{1,6}$/.test(raw) ? Math.min(Math.max(1, Number(raw)), pages) : 1;
  const link = (v: DiffView, p = page) => `?${new URLSearchParams({ view: v, ...(p > 1 ? { files_page: String(p) } : {}) }).toString()}`;
  const toggle = html`<nav class="tabs diff-view" aria-label="Diff view"><a href="${link('inline')}"${view === 'inline' ? html` aria-current="page"` : ''}>Inline</a><a href="${link('parallel')}"${view === 'parallel' ? html` aria-current="page"` : ''}>Side-by-side</a></nav>`;
  const shown = files.slice((page - 1) * DIFF_FILES_PER_PAGE, page * DIFF_FILES_PER_PAGE);
  const items = shown.map((d) => {
    const stats = d.additions !== undefined ? html` <span class="muted"><span class="add">+${d.additions}</span> <span class="del">−${d.deletions ?? 0}</span></span>` : '';
    const what = d.newFile ? ' (new file)' : d.deletedFile ? ' (deleted)' : '';
    return html`<section class="diff-file" id="${fileAnchor(d.newPath)}"><h3><a href="#${fileAnchor(d.newPath)}">${d.renamedFile ? `${d.oldPath} → ${d.newPath}` : d.newPath}</a>${what}${stats}</h3>${diffTable(d, view)}</section>`;
  });
  const pager = pages > 1
    ? html`<nav class="pager" aria-label="Files">${page > 1 ? html`<a rel="prev" href="${link(view, page - 1)}">‹ Previous files</a>` : ''}<span>Files ${(page - 1) * DIFF_FILES_PER_PAGE + 1}–${(page - 1) * DIFF_FILES_PER_PAGE + shown.length} of ${files.length}</span>${
      page < pages ? html`<a rel="next" href="${link(view, page + 1)}">Next files ›</a>` : ''}</nav>`
    : '';
  return html`${files.length ? toggle : ''}${pager}${items}${pager}`;
}
