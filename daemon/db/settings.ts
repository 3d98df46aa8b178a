/**
 * The application settings' data module: the one `application_settings` row (id 1). Validation and the cache stay in
 * services/instance/settings.ts. `q`: the database or a transaction.
 */
import type { Queries } from './layer/types.js';
import { toSettings } from './rows.js';
import type { ApplicationSettingsRow } from './schema.js';

/** A settings column's name in SQL (the row's camelCase key in snake_case). */
const column = (key: string) => key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** The settings row, or null before it was made. */
export async function settingsRow(q: Queries): Promise<ApplicationSettingsRow | null> {
  const raw = await q.get('SELECT * FROM application_settings WHERE id = 1');
  return raw ? toSettings(raw) : null;
}

/** Insert the settings row unless it exists. */
export async function insertSettingsRow(q: Queries, row: ApplicationSettingsRow): Promise<void> {
  const keys = Object.keys(row) as (keyof ApplicationSettingsRow)[];
  await q.run(
    `INSERT INTO application_settings (${keys.map(column).join(', ')}) VALUES (${keys.map(() => '?').join(', ')}) ON CONFLICT (id) DO NOTHING`,
    keys.map((k) => row[k]),
  );
}

/** Set columns of the settings row; the row after, or null when it is missing. */
export async function updateSettingsRow(q: Queries, set: Partial<ApplicationSettingsRow>): Promise<ApplicationSettingsRow | null> {
  const keys = Object.keys(set) as (keyof ApplicationSettingsRow)[];
  const raw = await q.get(`UPDATE application_settings SET ${keys.map((k) => `${column(k)} = ?`).join(', ')} WHERE id = 1 RETURNING *`, keys.map((k) => set[k]));
  return raw ? toSettings(raw) : null;
}

/** One column of the settings row (snake_case name from the caller's own constant), or undefined before the row exists. */
export async function settingsColumn(q: Queries, name: 'max_artifacts_size' | 'gravatar_enabled'): Promise<unknown> {
  const row = await q.get<{ v: unknown }>(`SELECT ${name} AS v FROM application_settings WHERE id = 1`);
  return row ? row.v : undefined;
}
