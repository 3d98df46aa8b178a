/**
 * Project services (GitLab 8.13's /projects/:id/services/:slug): one row per project and service type, with its
 * settings as a JSON object (`properties`), whether it is active, and the event switches. Slack is the service served
 * here; its messages are built by slack.ts and queued by the outbox (services/hooks/deliveries.ts) with the project hook
 * deliveries of the same event. A service that was never set up is made (inactive, 8.13's default settings) the first
 * time it is read, as 8.13's build_missing_services did, so it has an id and dates.
 */
import type { AppContext } from '../../context.js';
import { now } from '../../context.js';
import type { Queries } from '../../db/layer/types.js';
import { isForeignKeyViolation } from '../../db/layer/errors.js';
import { badRequest, notFound, validationError } from '../../errors.js';
import type { ProjectServiceRow } from '../../db/rows.js';
import {
  deletePendingServiceDeliveries, insertProjectServiceRow, projectServiceRow, updateProjectServiceRow,
} from '../../db/hooks.js';
import { validHookUrl } from '../hooks/project-hooks.js';

/** The event switches of a service (columns of project_services). */
export const SERVICE_EVENT_FLAGS = [
  'push_events', 'issues_events', 'merge_requests_events', 'tag_push_events', 'note_events', 'build_events', 'pipeline_events',
] as const;
export type ServiceEventFlag = (typeof SERVICE_EVENT_FLAGS)[number];

/** One setting of a service: a text or a checkbox (8.13's `fields`). */
export interface ServiceField {
  name: string;
  type: 'text' | 'checkbox';
  /** The service cannot be activated without it (8.13's presence validators). */
  required?: boolean;
  /** Must be an http(s) URL. */
  url?: boolean;
}

/** A service type: its slug, title and settings, and the settings a new one starts with. */
export interface ServiceType {
  slug: string;
  title: string;
  fields: ServiceField[];
  defaults: Record<string, unknown>;
}

// 8.13's SlackService: webhook, username, channel, the two "only broken" switches, and one channel per event.
const SLACK_CHANNEL_EVENTS = ['push', 'issue', 'confidential_issue', 'merge_request', 'note', 'tag_push', 'build', 'pipeline', 'wiki_page'];

/** The services served, by slug. */
export const SERVICE_TYPES: Record<string, ServiceType> = {
  slack: {
    slug: 'slack',
    title: 'Slack',
    fields: [
      { name: 'webhook', type: 'text', required: true, url: true },
      { name: 'username', type: 'text' },
      { name: 'channel', type: 'text' },
      { name: 'notify_only_broken_builds', type: 'checkbox' },
      { name: 'notify_only_broken_pipelines', type: 'checkbox' },
      ...SLACK_CHANNEL_EVENTS.map((e) => ({ name: `${e}_channel`, type: 'text' as const })),
    ],
    defaults: { notify_only_broken_builds: true, notify_only_broken_pipelines: true },
  },
};

/** The service type of a slug, or null (a slug 8.13 would underscore: `slack`). */
export function serviceType(slug: string): ServiceType | null {
  return Object.hasOwn(SERVICE_TYPES, slug) ? SERVICE_TYPES[slug]! : null;
}

/** A stored `properties` text as an object (anything else as {}). */
export function parseProperties(text: unknown): Record<string, unknown> {
  if (typeof text !== 'string') return {};
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A checkbox value as 8.13 read it: true, 'true', '1', 1 and 'on' are on. */
function checked(v: unknown): boolean {
  return v === true || v === 1 || (typeof v === 'string' && ['true', '1', 'on', 'yes'].includes(v.trim().toLowerCase()));
}

/** The service row of a project (made with the defaults when there was none); 404 when the project is gone. */
export async function getService(ctx: AppContext, projectId: number, type: ServiceType, q: Queries = ctx.data): Promise<ProjectServiceRow> {
  const found = await projectServiceRow(q, projectId, type.slug);
  if (found) return found;
  try {
    await insertProjectServiceRow(q, projectId, type.slug, JSON.stringify(type.defaults), now());
  } catch (e) {
    if (isForeignKeyViolation(e)) throw notFound('Project');
    throw e;
  }
  const row = await projectServiceRow(q, projectId, type.slug);
  if (!row) throw notFound('Project');
  return row;
}

/**
 * PUT: set the given settings (the others are kept) and switches, and activate the service. A required setting that is
 * neither given nor set answers 400 `"webhook" not given` (8.13's required_attributes!), a webhook that is not an
 * http(s) URL 400 with the field's error; nothing changes then. Returns the updated row.
 */
export async function setService(ctx: AppContext, projectId: number, type: ServiceType, params: Record<string, unknown>): Promise<ProjectServiceRow> {
  for (const f of type.fields) {
    const v = params[f.name];
    if (f.required && (v === undefined || v === null || String(v).trim() === '')) throw badRequest(f.name);
    if (f.url && v !== undefined && v !== null && !validHookUrl(String(v))) throw validationError({ [f.name]: ['is not a valid URL'] });
  }
  const flags = SERVICE_EVENT_FLAGS.filter((f) => params[f] !== undefined);
  return ctx.data.transaction(async (tx) => {
    const row = await getService(ctx, projectId, type, tx);
    const props = parseProperties(row.properties);
    for (const f of type.fields) {
      const v = params[f.name];
      if (v === undefined) continue;
      props[f.name] = f.type === 'checkbox' ? checked(v) : v === null ? null : String(v);
    }
    const updated = await updateProjectServiceRow(tx, row.id, JSON.stringify(props), true, flags.map((f) => [f, checked(params[f])]), now());
    if (!updated) throw notFound('Project');
    return updated;
  });
}

/**
 * DELETE: 8.13 empties every setting (each becomes null) and deactivates the service; its deliveries not sent yet are
 * dropped with it. Returns the updated row.
 */
export async function deleteService(ctx: AppContext, projectId: number, type: ServiceType): Promise<ProjectServiceRow> {
  return ctx.data.transaction(async (tx) => {
    const row = await getService(ctx, projectId, type, tx);
    const props = Object.fromEntries(type.fields.map((f) => [f.name, null]));
    const updated = await updateProjectServiceRow(tx, row.id, JSON.stringify(props), false, [], now());
    await deletePendingServiceDeliveries(tx, row.id);
    if (!updated) throw notFound('Project');
    return updated;
  });
}
