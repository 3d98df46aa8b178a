/**
 * The pages' rendering pieces without a server: GitLab-flavoured Markdown (:emoji:, references, task lists, tables,
 * fenced code, sanitizing) and the diff views (line numbers, anchors, pairing of removed and added lines).
 */
import { describe, expect, it } from 'vitest';
import { diffFiles, diffTable, fileAnchor } from '../../daemon/web/pages/diff.js';
import { renderMarkdown } from '../../daemon/web/pages/markdown.js';

const md = (source: string) => renderMarkdown(source, { projectPath: '/grp/app' }).text;

describe('Markdown', () => {
  it(':emoji: becomes its character in text, never in code or link targets; unknown names stay as typed', () => {
    const out = md('Nice :tada: and :+1: but :nope: and `:tada:`\n\n[go :rocket:](https://x.test/:tada:)\n\n```\n:bug:\n```');
    expect(out).toContain('Nice 🎉 and 👍 but :nope: and <code>:tada:</code>');
    expect(out).toContain('<a href="https://x.test/:tada:" rel="nofollow noreferrer noopener">go 🚀</a>');
    expect(out).toContain(':bug:\n</code>');
  });

  it('tables, fenced code highlighted, task lists and references', () => {
    const out = md('| a | b |\n| - | - |\n| 1 | 2 |\n\n```ts\nconst x = 1;\n```\n\n- [x] done\n- [ ] todo\n\nSee #12, !3 and @bob.');
    expect(out).toContain('<td>1</td>');
    expect(out).toContain('<span class="hljs-keyword">const</span>');
    expect(out).toMatch(/<li class="task-list-item"><input type="checkbox" class="task-list-item-checkbox" disabled checked \/?>\s*done/);
    expect(out).toContain('<a href="/grp/app/issues/12" class="gfm gfm-issue"');
    expect(out).toContain('<a href="/grp/app/merge_requests/3" class="gfm gfm-merge_request"');
    expect(out).toContain('<a href="/bob" class="gfm gfm-project_member"');
  });

  it('script, event handlers, javascript: and data: URLs (a data-URI SVG too) are removed', () => {
    const out = md([
      '<script>alert(1)</script>', '<img src=x onerror="alert(2)">', '[a](javascript:alert(3))', '<a href="JaVaScRiPt:alert(4)">b</a>',
      '<img src="data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9ImFsZXJ0KDUpIi8+">', '<svg onload="alert(6)"></svg>', '<iframe src="https://evil.test"></iframe>',
      '<a href="data:text/html,<script>alert(7)</script>">c</a>',
    ].join('\n\n'));
    // (what stays is text: markdown-it leaves a refused link as its source)
    expect(out).not.toMatch(/<script|<iframe|<svg|\son\w+=|(href|src)="\s*(javascript|data):/i);
    expect(out).not.toMatch(/<a[^>]*href="[^"]*(javascript|data):/i);
    expect(out).not.toMatch(/<img[^>]*data:/i);
  });
});

describe('diffs', () => {
  const diff = '@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,2 +10,3 @@\n x\n+y\n z\n\\ No newline at end of file\n';

  it('numbers each line from the hunk headers (diff2html reads them) and shows each hunk\'s header', () => {
    const a = fileAnchor('f.txt');
    const inline = diffTable({ diff, newPath: 'f.txt' }, 'inline').text;
    const ids = [...inline.matchAll(/<tr class="(\w+)"(?: id="[0-9a-f]{40}_(\d+)_(\d+)")?/g)].map((m) => [m[1], m[2] ?? null, m[3] ?? null]);
    expect(ids).toEqual([
      ['hunk', null, null], ['ctx', '1', '1'], ['del', '2', '0'], ['add', '0', '2'], ['ctx', '3', '3'],
      ['hunk', null, null], ['ctx', '10', '10'], ['add', '0', '11'], ['ctx', '11', '12'],
    ]);
    expect(inline).toContain('<td class="line">@@ -10,2 +10,3 @@</td>');
    expect(inline).toContain(`<td class="ln"><a href="#${a}_11_12">11</a></td><td class="ln"><a href="#${a}_11_12">12</a></td><td class="line" data-sign=" ">z</td>`);
  });

  it('a git file header before the first hunk is not a line of the diff', () => {
    const t = diffTable({ diff: '--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+hello\n', newPath: 'new.txt' }, 'inline').text;
    expect(t.match(/<tr class="add"/g)).toHaveLength(1);
    expect(t).not.toContain('dev/null');
  });

  it('inline rows carry GitLab line codes; side by side pairs a removed line with its replacement', () => {
    const a = fileAnchor('f.txt');
    const inline = diffTable({ diff, newPath: 'f.txt' }, 'inline').text;
    expect(inline).toContain(`<tr class="del" id="${a}_2_0">`);
    expect(inline).toContain(`<tr class="add" id="${a}_0_11">`);
    const parallel = diffTable({ diff, newPath: 'f.txt' }, 'parallel').text;
    // a removed line beside its replacement, the changed words marked (diff2html's <del>/<ins>)
    expect(parallel).toContain(`<td class="line del" id="${a}_2_0"><del>b</del></td><td class="ln"><a href="#${a}_0_2">2</a></td><td class="line add" id="${a}_0_2"><ins>B</ins></td>`);
    // a context line is on both sides: the left cell's id ends in _l, both numbers link to the line code
    expect(parallel).toContain(`<td class="ln"><a href="#${a}_1_1">1</a></td><td class="line ctx" id="${a}_1_1_l">a</td><td class="ln"><a href="#${a}_1_1">1</a></td><td class="line ctx" id="${a}_1_1">a</td>`);
    expect(parallel).toContain(`<td class="ln empty"></td><td class="line empty"></td><td class="ln"><a href="#${a}_0_11">11</a></td>`);
  });

  it('escapes the code and says so for binary files and diffs too large to show', () => {
    for (const view of ['inline', 'parallel'] as const) {
      const t = diffTable({ diff: '@@ -1 +1 @@\n-<b>\n+<script>x</script><img src=x onerror="alert(1)">\n', newPath: 'h.html' }, view).text;
      expect(t).not.toMatch(/<script|<img|<b>/);
      expect(t).toContain('&lt;');
      expect(t.replace(/<\/?(ins|del)>/g, '')).toContain('&lt;script&gt;x&lt;&#x2F;script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    }
    expect(diffTable({ diff: '', newPath: 'p.png', binary: true }, 'inline').text).toContain('Binary file');
    expect(diffTable({ diff: '', newPath: 'big', tooLarge: true }, 'parallel').text).toContain('too large');
  });

  it('a file\'s table is rendered once per view while its diff object lives (a merge request\'s kept changes)', () => {
    const file = { diff, newPath: 'kept.txt' };
    const first = diffTable(file, 'inline');
    expect(diffTable(file, 'inline')).toBe(first);
    expect(diffTable(file, 'parallel')).not.toBe(first);
    expect(diffTable(file, 'parallel').text).toContain('<table class="diff parallel">');
    // another object with the same text is rendered anew, the same
    expect(diffTable({ ...file }, 'inline')).not.toBe(first);
    expect(diffTable({ ...file }, 'inline').text).toBe(first.text);
  });

  it('a diff of many files is shown 50 files a page (?files_page=), the view kept across pages', () => {
    const files = Array.from({ length: 120 }, (_, i) => ({
      diff: `@@ -1 +1 @@\n-a${i}\n+b${i}\n`, oldPath: `f${i}.txt`, newPath: `f${i}.txt`, renamedFile: false, newFile: false, deletedFile: false,
    }));
    const first = diffFiles(files, {}).text;
    expect(first.match(/class="diff-file"/g)).toHaveLength(50);
    expect(first).toContain('Files 1–50 of 120');
    expect(first).toContain('<a rel="next" href="?view=inline&amp;files_page=2">Next files ›</a>');
    const second = diffFiles(files, { files_page: '2', view: 'parallel' }).text;
    expect(second).toContain('Files 51–100 of 120');
    expect(second).toContain(`id="${fileAnchor('f50.txt')}"`);
    expect(second).not.toContain(`id="${fileAnchor('f49.txt')}"`);
    expect(second).toContain('<a rel="prev" href="?view=parallel">‹ Previous files</a>');
    expect(second).toContain('<a href="?view=inline&amp;files_page=2">Inline</a>');
    // past the end: the last page; garbage: the first
    expect(diffFiles(files, { files_page: '99' }).text).toContain('Files 101–120 of 120');
    expect(diffFiles(files, { files_page: '-1' }).text).toContain('Files 1–50 of 120');
  });
});
