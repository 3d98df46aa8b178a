/** Rendering results: JSON for scripts, aligned tables and key/value records for people. */
import type { IO } from './io.js';

/** One table column: a header and how to get the cell text from a row. */
export interface Column<T> {
  header: string;
  value(row: T): unknown;
  /** Cut cells longer than this (with an ellipsis). */
  max?: number;
}

/** Cell text: null/undefined as empty, booleans as yes/no, arrays comma-joined, objects as JSON; one line. */
export function cellText(value: unknown, max?: number): string {
  let text: string;
  if (value === null || value === undefined) text = '';
  else if (typeof value === 'boolean') text = value ? 'yes' : 'no';
  else if (Array.isArray(value)) text = value.map((v) => (typeof v === 'object' ? JSON.stringify(v) : String(v))).join(', ');
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  text = text.replace(/\s*[\r\n]+\s*/g, ' ');
  if (max && text.length > max) text = `${text.slice(0, max - 1)}…`;
  return text;
}

/** Render rows as columns aligned with spaces under an upper-case header line; the last column is not padded. */
export function renderTable<T>(rows: T[], columns: Column<T>[]): string {
  const cells = [columns.map((c) => c.header.toUpperCase()), ...rows.map((row) => columns.map((c) => cellText(c.value(row), c.max)))];
  const widths = columns.map((_, i) => Math.max(...cells.map((line) => line[i].length)));
  return cells
    .map((line) => line.map((cell, i) => (i === line.length - 1 ? cell : cell.padEnd(widths[i]))).join('  ').trimEnd())
    .join('\n') + '\n';
}

/** Render `key: value` lines with the keys aligned. */
export function renderRecord(entries: Array<[string, unknown]>): string {
  const width = Math.max(0, ...entries.map(([k]) => k.length));
  return entries.map(([k, v]) => `${`${k}:`.padEnd(width + 1)} ${cellText(v)}`.trimEnd()).join('\n') + '\n';
}

/** Print data as indented JSON on stdout. */
export function printJson(io: IO, data: unknown): void {
  io.out(`${JSON.stringify(data, null, 2)}\n`);
}

/** Print a list: JSON when asked, else a table (or a note on stderr when it is empty). */
export function printList<T>(io: IO, rows: T[], columns: Column<T>[], opts: { json?: boolean; noun: string }): void {
  if (opts.json) return printJson(io, rows);
  if (rows.length === 0) {
    io.err(`No ${opts.noun} found.\n`);
    return;
  }
  io.out(renderTable(rows, columns));
}

/** A timestamp as `YYYY-MM-DD HH:MM` (UTC) for tables; the input when it is not a timestamp. */
export function shortTime(value: unknown): string {
  if (typeof value !== 'string') return '';
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(value);
  return m ? `${m[1]} ${m[2]}` : value;
}

/** Visibility level number -> name. */
export function visibilityName(level: unknown): string {
  return level === 0 ? 'private' : level === 10 ? 'internal' : level === 20 ? 'public' : cellText(level);
}
