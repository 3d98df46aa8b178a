/**
 * The templates of the web pages: `html` is a tagged template that escapes every interpolated value unless it is
 * already Html (built by `html` itself, or by the sanitized Markdown/highlight renderers through `trusted`). No page
 * concatenates user data into markup any other way.
 */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** HTML-escape a text for element content or a quoted attribute. */
export const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/** Markup that is safe to insert as is. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

type Value = Html | string | number | boolean | null | undefined | readonly Value[];

function render(v: Value): string {
  if (v === null || v === undefined || v === false) return '';
  if (v instanceof Html) return v.text;
  if (Array.isArray(v)) return (v as readonly Value[]).map(render).join('');
  return escapeHtml(String(v));
}

/** The tagged template: literal parts as written, every value escaped (arrays joined, Html kept). */
export function html(strings: TemplateStringsArray, ...values: Value[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
  return new Html(out);
}

/** Markup produced by a sanitizer or highlighter of this room (never user text). */
export const trusted = (text: string) => new Html(text);

/** A relative time ("3 minutes ago") with the exact time in a <time> element. */
export function timeAgo(iso: string | null | undefined, now = Date.now()): Html {
  if (!iso) return html``;
  const at = Date.parse(iso);
  if (Number.isNaN(at)) return html``;
  const s = Math.round((now - at) / 1000);
  const abs = Math.abs(s);
  const units: [number, string][] = [[31536000, 'year'], [2592000, 'month'], [604800, 'week'], [86400, 'day'], [3600, 'hour'], [60, 'minute']];
  let text = 'just now';
  for (const [size, name] of units) {
    if (abs >= size) {
      const n = Math.floor(abs / size);
      text = `${n} ${name}${n === 1 ? '' : 's'} ${s >= 0 ? 'ago' : 'from now'}`;
      break;
    }
  }
  return html`<time datetime="${new Date(at).toISOString()}" title="${new Date(at).toUTCString()}">${text}</time>`;
}

/** GitLab's `?page=` pagination: the page number asked for (1 when absent or bad). */
export function pageNumber(query: unknown, param = 'page'): number {
  const raw = (query as Record<string, unknown> | undefined)?.[param];
  const n = typeof raw === 'string' && /^\d{1,6}$/.test(raw) ? Number(raw) : 1;
  return n >= 1 ? n : 1;
}

/**
 * Previous/next links of a list of `total` items, `perPage` a page; `extra` query kept (e.g. state); `param` names the
 * page number (`page`, or another where a page holds two lists: a merge request's `commits_page` beside `files_page`).
 */
export function pager(page: number, perPage: number, total: number, extra: Record<string, string> = {}, param = 'page'): Html {
  const pages = Math.max(1, Math.ceil(total / perPage));
  if (pages <= 1) return html``;
  const link = (n: number) => `?${new URLSearchParams({ ...extra, [param]: String(n) }).toString()}`;
  return html`<nav class="pager" aria-label="Pages">${page > 1 ? html`<a rel="prev" href="${link(page - 1)}">‹ Previous</a>` : ''}
<span>Page ${page} of ${pages}</span>${page < pages ? html`<a rel="next" href="${link(page + 1)}">Next ›</a>` : ''}</nav>`;
}

/** A status badge (pipelines, builds, commits); `of` names what it shows for the live script (`pipeline`, `build`, `build-N`). */
export const statusBadge = (status: string | null | undefined, of?: string) =>
  (status ? html`<span class="status status-${status.replace(/[^a-z_]/g, '')}"${of ? html` data-status-of="${of}"` : ''}>${status}</span>` : html``);
