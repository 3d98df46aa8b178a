/**
 * GitLab-flavoured Markdown for the pages: markdown-it (CommonMark, tables, fenced code, linkify) with a core rule of
 * our own for `#123` / `!45` / `@user` references, `:emoji:` and task lists, fenced code highlighted by highlight.js, and the
 * whole output sanitized by sanitize-html (raw HTML in the source is allowed only as far as the sanitizer lets it:
 * no script, no event handlers, no javascript:/data: URLs). Code files are highlighted the same way.
 */
import { createRequire } from 'node:module';
import type { HLJSApi } from 'highlight.js';
import type MarkdownIt from 'markdown-it';
import type sanitizeHtml from 'sanitize-html';
import { replaceEmoji } from './emoji.js';
import { escapeHtml, trusted, type Html } from './html.js';

// highlight.js, markdown-it and sanitize-html (about 50 MB resident together) load on the first page that renders
// Markdown or code, not with the daemon: an API-only daemon never needs them (issue 26: idle RSS under 100 MB).
const load = createRequire(import.meta.url);
let hljsModule: HLJSApi | undefined;
const hljs = () => (hljsModule ??= load('highlight.js') as HLJSApi);
let sanitizeModule: typeof sanitizeHtml | undefined;
const sanitizer = () => (sanitizeModule ??= load('sanitize-html') as typeof sanitizeHtml);

/** Where references point: the project's web path (`/ns/project`) and the root of the site. */
export interface MarkdownContext {
  projectPath?: string;
}

function highlight(code: string, lang: string): string {
  const language = lang && hljs().getLanguage(lang) ? lang : null;
  try {
    return language ? hljs().highlight(code, { language, ignoreIllegals: true }).value : escapeHtml(code);
  } catch {
    return escapeHtml(code);
  }
}

type Token = ReturnType<InstanceType<typeof MarkdownIt>['parse']>[number];

type Md = InstanceType<typeof MarkdownIt>;
let mdInstance: Md | undefined;
/** The renderer, made (with the rules below) on first use. */
function markdownIt(): Md {
  if (!mdInstance) {
    const Ctor = load('markdown-it') as typeof MarkdownIt;
    mdInstance = new Ctor({ html: true, linkify: true, highlight: (code, lang) => highlight(code, lang) });
    installRules(mdInstance);
  }
  return mdInstance;
}

const REFERENCE = /(^|[^\w&/])(#(\d{1,9})|!(\d{1,9})|@([A-Za-z0-9_][A-Za-z0-9_.-]{0,254}[A-Za-z0-9_]|[A-Za-z0-9_]))(?![\w])/g;

/** Split a text token into text and link tokens for the references it holds. */
function referenceTokens(state: { Token: new (type: string, tag: string, nesting: -1 | 0 | 1) => Token; env: MarkdownContext }, text: string, level: number): Token[] | null {
  const out: Token[] = [];
  let last = 0;
  const push = (content: string) => {
    if (!content) return;
    const t = new state.Token('text', '', 0);
    t.content = content;
    t.level = level;
    out.push(t);
  };
  for (const m of text.matchAll(REFERENCE)) {
    const start = m.index! + m[1]!.length;
    const project = state.env.projectPath;
    let href: string | null = null;
    let cls = '';
    if (m[3] && project) [href, cls] = [`${project}/issues/${m[3]}`, 'gfm gfm-issue'];
    else if (m[4] && project) [href, cls] = [`${project}/merge_requests/${m[4]}`, 'gfm gfm-merge_request'];
    else if (m[5]) [href, cls] = [`/${m[5]}`, 'gfm gfm-project_member'];
    if (!href) continue;
    push(text.slice(last, start));
    const open = new state.Token('link_open', 'a', 1);
    open.attrs = [['href', href], ['class', cls]];
    const body = new state.Token('text', '', 0);
    body.content = m[2]!;
    out.push(open, body, new state.Token('link_close', 'a', -1));
    last = start + m[2]!.length;
  }
  if (!out.length) return null;
  push(text.slice(last));
  return out;
}

function installRules(md: Md): void {
  // References outside links and code: a core rule over the inline tokens.
  md.core.ruler.push('gitlab_references', (state) => {
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) continue;
      const children: Token[] = [];
      let inLink = 0;
      for (const t of block.children) {
        if (t.type === 'link_open') inLink++;
        if (t.type === 'link_close') inLink--;
        const split = t.type === 'text' && !inLink ? referenceTokens(state as never, t.content, t.level) : null;
        if (split) children.push(...split);
        else children.push(t);
      }
      block.children = children;
    }
  });

  // :emoji: in text (never in code spans, code blocks or link targets: only text tokens are rewritten).
  md.core.ruler.push('gitlab_emoji', (state) => {
    for (const block of state.tokens) {
      if (block.type !== 'inline' || !block.children) continue;
      for (const t of block.children) if (t.type === 'text' && t.content.includes(':')) t.content = replaceEmoji(t.content);
    }
  });

  // Task lists: a list item starting with `[ ]` or `[x]` gets a disabled checkbox.
  md.core.ruler.push('gitlab_task_lists', (state) => {
    const tokens = state.tokens;
    for (let i = 2; i < tokens.length; i++) {
      const inline = tokens[i]!;
      if (inline.type !== 'inline' || tokens[i - 1]!.type !== 'paragraph_open' || tokens[i - 2]!.type !== 'list_item_open') continue;
      const first = inline.children?.[0];
      const m = first?.type === 'text' ? /^\[([ xX])\]\s/.exec(first.content) : null;
      if (!m || !first) continue;
      first.content = first.content.slice(m[0].length);
      const box = new state.Token('html_inline', '', 0);
      box.content = `<input type="checkbox" class="task-list-item-checkbox" disabled${m[1] === ' ' ? '' : ' checked'}> `;
      inline.children!.unshift(box);
      tokens[i - 2]!.attrJoin('class', 'task-list-item');
    }
  });
}

let sanitizeOptions: sanitizeHtml.IOptions | undefined;
const SANITIZE = () => (sanitizeOptions ??= sanitizeRules(sanitizer()));
const sanitizeRules = (sanitizeHtml: typeof import('sanitize-html')): sanitizeHtml.IOptions => ({
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'input', 'del', 's', 'details', 'summary', 'sup', 'sub', 'kbd', 'span'],
  allowedAttributes: {
    a: ['href', 'title', 'class', 'rel'],
    img: ['src', 'alt', 'title', 'width', 'height'],
    input: ['type', 'checked', 'disabled', 'class'],
    li: ['class'],
    code: ['class'],
    span: ['class'],
    th: ['align', 'style'],
    td: ['align', 'style'],
    '*': ['id'],
  },
  allowedStyles: { '*': { 'text-align': [/^(left|right|center)$/] } },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href', 'src'],
  allowProtocolRelative: false,
  exclusiveFilter: (frame) => frame.tag === 'input' && frame.attribs.type !== 'checkbox',
  transformTags: {
    a: sanitizeHtml.simpleTransform('a', { rel: 'nofollow noreferrer noopener' }),
    // An image from another site is a link to it, never loaded by the page (no tracking pixel, nothing to inject).
    img: (tagName, attribs) => (/^[a-z][a-z0-9+.-]*:|^\/\//i.test(attribs.src ?? '')
      ? { tagName: 'a', attribs: { href: attribs.src!, rel: 'nofollow noreferrer noopener' }, text: attribs.alt || attribs.src! }
      : { tagName, attribs }),
  },
});

/**
 * Rendered Markdown by project and source, the most recently used first out last: parsing and sanitizing cost about a
 * millisecond a note, and an issue's notes are read far more often than written. The output depends only on the key,
 * so an edited note is a new key and never reads a stale rendering.
 */
const RENDERED = new Map<string, string>();
const RENDERED_MAX = 5000;
const RENDERED_SOURCE_MAX = 32 * 1024;

/** Markdown rendered and sanitized. */
export function renderMarkdown(source: string, env: MarkdownContext = {}): Html {
  if (source.length > RENDERED_SOURCE_MAX) return trusted(sanitizer()(markdownIt().render(source, { ...env }), SANITIZE()));
  const key = `${env.projectPath ?? ''}\0${source}`;
  let out = RENDERED.get(key);
  if (out !== undefined) RENDERED.delete(key);
  else {
    out = sanitizer()(markdownIt().render(source, { ...env }), SANITIZE());
    if (RENDERED.size >= RENDERED_MAX) RENDERED.delete(RENDERED.keys().next().value!);
  }
  RENDERED.set(key, out);
  return trusted(out);
}

/** Highlighted code (a language from the file name, when highlight.js knows it), one string per line. */
export function highlightLines(code: string, fileName: string): Html[] {
  const ext = fileName.includes('.') ? fileName.slice(fileName.lastIndexOf('.') + 1).toLowerCase() : fileName.toLowerCase();
  const lang = hljs().getLanguage(ext) ? ext : '';
  const lines = code.replace(/\n$/, '').split('\n');
  if (!lang || code.length > 512 * 1024) return lines.map((l) => trusted(escapeHtml(l)));
  return splitHighlighted(hljs().highlight(code.replace(/\n$/, ''), { language: lang, ignoreIllegals: true }).value);
}

/** Split highlight.js markup into lines, closing the spans open at a line's end and reopening them on the next. */
function splitHighlighted(markup: string): Html[] {
  const out: Html[] = [];
  const open: string[] = [];
  let line = '';
  for (const part of markup.split(/(<span [^>]*>|<\/span>|\n)/)) {
    if (part === '\n') {
      out.push(trusted(line + '</span>'.repeat(open.length)));
      line = open.join('');
    } else if (part.startsWith('<span ')) {
      open.push(part);
      line += part;
    } else if (part === '</span>') {
      open.pop();
      line += part;
    } else line += part;
  }
  out.push(trusted(line + '</span>'.repeat(open.length)));
  return out;
}

/** Whether a file name is rendered as Markdown (README.md, *.markdown). */
export const isMarkdownName = (name: string) => /\.(md|markdown|mkd|mdown)$/i.test(name);
