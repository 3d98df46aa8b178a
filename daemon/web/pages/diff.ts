/**
 * Diffs in the pages: a file's unified diff (git's text, as the API's `diff` field holds it) shown inline or side by
 * side (`?view=parallel`, a plain link: no script needed), each line with its old and new line numbers and an anchor
 * (`#<file-anchor>_<old>_<new>`, GitLab 8.x's line codes) that a link may point at.
 *
 * diff2html reads git's text (hunks, line numbers), pairs the removed lines with the added ones that replace them and
 * marks the changed words (`<del>`/`<ins>`), escaping every text. Its two renderers are used with their row methods
 * replaced by ours (inlineRow, parallelRow): their templates have no line anchors, and its side-by-side view is two tables kept aligned by its
 * browser script; here both sides are one table (rows aligned without script), each row our markup around the
 * content diff2html escaped.
 */
import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import type { DiffFile } from 'diff2html/lib/types.js';
import type { FileDiff } from '../../git/diff.js';
import { html, trusted, type Html } from './html.js';

/** The two views; `inline` unless the query asks for `parallel` (GitLab's `view=parallel`). */
export type DiffView = 'inline' | 'parallel';
export const diffViewOf = (query: unknown): DiffView => ((query as Record<string, unknown> | undefined)?.view === 'parallel' ? 'parallel' : 'inline');

/** GitLab's file anchor: the sha1 of the file's path (what `#<anchor>_<old>_<new>` line codes start with). */
export const fileAnchor = (path: string) => createHash('sha1').update(path).digest('hex');

/** A line as diff2html's renderers hand it over: its CSS class (d2h-ins, d2h-del, d2h-cntx, + d2h-change), escaped content. */
interface PreparedLine {
  type: string;
  prefix: string;
  content: string;
  oldNumber?: number;
  newNumber?: number;
  number?: number;
}

type Kind = 'add' | 'del' | 'ctx';
const kindOf = (type: string): Kind => (type.startsWith('d2h-ins') ? 'add' : type.startsWith('d2h-del') ? 'del' : 'ctx');
const SIGN = { add: '+', del: '-', ctx: ' ' } as const;
/** diff2html escaped the content (and added only its `<del>`/`<ins>` word marks). */
const content = (l: PreparedLine) => trusted(l.content);
const num = (id: string, n: number | undefined) => (n === undefined ? html`<td class="ln"></td>` : html`<td class="ln"><a href="#${id}">${n}</a></td>`);
/** A hunk's `@@ -a,b +c,d @@` row of the side-by-side table (the inline one is diff2html's block-header template). */
const parallelHunkRow = (header: string) => html`<tr class="hunk"><td class="ln"></td><td class="line" colspan="3">${header}</td></tr>`.text;

// diff2html (and its jsdiff and hogan) load with the first diff shown, not with the daemon (as markdown.ts's libraries).
const load = createRequire(import.meta.url);
type Renderers = { parse: typeof import('diff2html').parse; inline: (file: DiffFile, anchor: string) => string; parallel: (file: DiffFile, anchor: string) => string };
let renderers: Renderers | undefined;

function makeRenderers(): Renderers {
  const { parse } = load('diff2html') as typeof import('diff2html');
  const LineByLine = (load('diff2html/lib/line-by-line-renderer.js') as typeof import('diff2html/lib/line-by-line-renderer.js')).default;
  const SideBySide = (load('diff2html/lib/side-by-side-renderer.js') as typeof import('diff2html/lib/side-by-side-renderer.js')).default;
  const Hogan = (load('diff2html/lib/hoganjs-utils.js') as typeof import('diff2html/lib/hoganjs-utils.js')).default;
  // the one template the inline renderer still renders itself: a hunk's `@@ ... @@` row (escaped by diff2html)
  const hogan = new Hogan({ rawTemplates: { 'generic-block-header': '<tr class="hunk"><td class="ln"></td><td class="ln"></td><td class="line">{{{blockHeader}}}</td></tr>' } });
  // word marks within paired lines; no re-matching of lines across a block (its cost grows with the block's square)
  const config = { matching: 'none', diffStyle: 'word' } as const;

  return {
    parse,
    // each view: one of diff2html's renderers for the file, its row methods replaced by ours on that instance
    inline: (file, anchor) =>
      Object.assign(new LineByLine(hogan, config), {
        generateSingleLineHtml: (_file: DiffFile, line?: PreparedLine) => (line ? inlineRow(anchor, line) : ''),
      }).generateFileHtml(file),
    parallel: (file, anchor) =>
      Object.assign(new SideBySide(hogan, config), {
        makeHeaderHtml: (blockHeader: string, f?: DiffFile) => (f ? parallelHunkRow(blockHeader) : ''),
        generateLineHtml: (oldLine?: PreparedLine, newLine?: PreparedLine) => ({ left: parallelRow(anchor, oldLine, newLine), right: '' }),
      }).generateFileHtml(file).left,
  };
}

/** A line's code: `<file anchor>_<old>_<new>`, 0 for the side the line is not on (GitLab 8.x's line codes). */
const lineCode = (anchor: string, oldN: number | undefined, newN: number | undefined) => `${anchor}_${oldN ?? 0}_${newN ?? 0}`;

/** A row of the inline table: old and new line numbers, the line with its sign. */
function inlineRow(anchor: string, line: PreparedLine): string {
  const kind = kindOf(line.type);
  const id = lineCode(anchor, line.oldNumber, line.newNumber);
  return html`<tr class="${kind}" id="${id}">${num(id, line.oldNumber)}${num(id, line.newNumber)}<td class="line" data-sign="${SIGN[kind]}">${content(line)}</td></tr>`.text;
}

/** A row of the side-by-side table: both sides in one row of one table (rows aligned without script). */
function parallelRow(anchor: string, oldLine?: PreparedLine, newLine?: PreparedLine): string {
  const ctx = oldLine !== undefined && newLine !== undefined && kindOf(oldLine.type) === 'ctx';
  const cell = (l: PreparedLine | undefined, side: 'old' | 'new') => {
    if (!l) return html`<td class="ln empty"></td><td class="line empty"></td>`;
    const oldN = side === 'old' ? l.number : ctx ? oldLine!.number : undefined;
    const newN = side === 'new' ? l.number : ctx ? newLine!.number : undefined;
    const id = lineCode(anchor, oldN, newN);
    // a context line is on both sides: the left one's id has `_l` so ids stay unique, both link to the line code
    return html`${num(id, l.number)}<td class="line ${kindOf(l.type)}" id="${id}${side === 'old' && ctx ? '_l' : ''}">${content(l)}</td>`;
  };
  return html`<tr${ctx ? html` class="ctx"` : ''}>${cell(oldLine, 'old')}${cell(newLine, 'new')}</tr>`.text;
}

/** The rows of one file's diff: its hunks (anything before the first, such as git's file header, left out) under a neutral header for diff2html. */
function diffRows(diff: string, anchor: string, view: DiffView): string {
  renderers ??= makeRenderers();
  const first = diff.startsWith('@@') ? 0 : diff.indexOf('\n@@') + 1;
  if (first === 0 && !diff.startsWith('@@')) return '';
  const [file] = renderers.parse(`--- a/file\n+++ b/file\n${diff.slice(first)}`);
  if (!file) return '';
  return view === 'parallel' ? renderers.parallel(file, anchor) : renderers.inline(file, anchor);
}

/** A file's diff in the chosen view (a table; binary files and diffs too large to show say so). */
export function diffTable(d: Pick<FileDiff, 'diff' | 'newPath'> & { binary?: boolean; tooLarge?: boolean }, view: DiffView): Html {
  if (d.binary) return html`<p class="muted">Binary file</p>`;
  if (d.tooLarge) return html`<p class="muted">This diff is too large to show.</p>`;
  if (!d.diff) return html`<p class="muted">No changes to the content.</p>`;
  const kept = RENDERED.get(d)?.[view];
  if (kept) return kept;
  const rows = trusted(diffRows(d.diff, fileAnchor(d.newPath), view));
  const table = html`<div class="diff-scroll"><table class="diff${view === 'parallel' ? ' parallel' : ''}"><tbody>${rows}</tbody></table></div>`;
  RENDERED.set(d, { ...RENDERED.get(d), [view]: table });
  return table;
}

/**
 * Each file's rendered table per view, kept as long as its diff object lives: a merge request's changes are kept per
 * diff version (merge-request-tabs.ts), so its pages render each file once (diff2html costs about 0.2 ms a file);
 * a commit's or a comparison's diff is read anew each time and goes with its request.
 */
const RENDERED = new WeakMap<object, Partial<Record<DiffView, Html>>>();

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
