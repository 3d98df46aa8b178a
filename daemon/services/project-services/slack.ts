/**
 * Slack notifications (GitLab 8.13's SlackService and its slack_service/*_message.rb): the message an event's hook data
 * becomes, as Slack::Notifier posts it (`{text, attachments, channel?, username?, fallback?}`), with Markdown links
 * turned into Slack's `<url|text>` (Slack::Notifier::LinkFormatter). Mattermost's incoming webhooks take the same body.
 * Pure functions of the hook payload: the outbox (services/hooks/deliveries.ts) queues the result next to the project
 * hook deliveries of the same event.
 */

/**
 * The settings of a Slack service (its `properties`): webhook, username, channel, notify_only_broken_builds,
 * notify_only_broken_pipelines, and per-event channels (push_channel, issue_channel ...) that win over `channel`.
 */
export type SlackProperties = Record<string, unknown>;

/** The body posted to the Slack (or Mattermost) incoming webhook. */
export interface SlackMessage {
  text: string;
  attachments: { text: string; color: string; title?: string; title_link?: string }[];
  fallback?: string;
  channel?: string;
  username?: string;
}

/** The events 8.13's Slack service has a message for (wiki pages are not served here). */
export const SLACK_EVENTS = ['push', 'tag_push', 'issue', 'merge_request', 'note', 'build', 'pipeline'] as const;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Data = Record<string, any>;

const ZERO_SHA = /^0{40}$/;
const blank = (v: unknown) => v === null || v === undefined || v === '';
const short = (sha: unknown) => String(sha ?? '').slice(0, 8);
const firstLine = (s: unknown) => String(s ?? '').split('\n')[0]!.replace(/\r$/, '');
/** A stored checkbox: true (or 8.13's 'true' / '1'). */
const checked = (v: unknown) => v === true || v === 'true' || v === '1' || v === 1;
const seconds = (n: unknown) => `${n ?? ''} ${n === 1 ? 'second' : 'seconds'}`;

/** Slack::Notifier::LinkFormatter: `[text](http...)` becomes `<http...|text>` (inner links first). */
export function slackLinks(s: string): string {
  let prev;
  let out = s;
  do {
    prev = out;
    out = out.replace(/\[([^[\]]*?)\]\(((?:https?:\/\/|mailto:)[^()\s]*?)\)/g, '<$2|$1>');
  } while (out !== prev);
  return out;
}

const link = (text: unknown, url: string) => `[${text}](${url})`;

function pushMessage(d: Data, project: string): Omit<SlackMessage, 'channel' | 'username'> {
  const tag = String(d.ref ?? '').startsWith('refs/tags/');
  const ref = String(d.ref ?? '').replace(/^refs\/(heads|tags)\//, '');
  const refType = tag ? 'tag' : 'branch';
  const url = String(d.project_url);
  const branchLink = link(ref, `${url}/commits/${ref}`);
  if (ZERO_SHA.test(String(d.before))) return { text: slackLinks(`${d.user_name} pushed new ${refType} ${branchLink} to ${project}`), attachments: [] };
  if (ZERO_SHA.test(String(d.after))) return { text: slackLinks(`${d.user_name} removed ${refType} ${ref} from ${project}`), attachments: [] };
  const compare = link('Compare changes', `${url}/compare/${d.before}...${d.after}`);
  const commits = ((d.commits ?? []) as Data[]).map((c) => `[${short(c.id)}](${c.url}): ${c.message} - ${c.author?.name}`).join('\n');
  return {
    text: slackLinks(`${d.user_name} pushed to ${refType} ${branchLink} of ${project} (${compare})`),
    attachments: [{ text: slackLinks(commits), color: '#345' }],
  };
}

function issueMessage(d: Data, project: string): Omit<SlackMessage, 'channel' | 'username'> {
  const a = d.object_attributes ?? {};
  const title = `#${a.iid} ${a.title}`;
  const text = a.state === 'opened'
    ? `[${project}] Issue ${a.state} by ${d.user?.username}`
    : `[${project}] Issue ${link(title, a.url)} ${a.state} by ${d.user?.username}`;
  return {
    text: slackLinks(text),
    attachments: a.action === 'open' ? [{ title, title_link: a.url, text: slackLinks(String(a.description ?? '')), color: '#C95823' }] : [],
  };
}

function mergeMessage(d: Data, project: string): Omit<SlackMessage, 'channel' | 'username'> {
  const a = d.object_attributes ?? {};
  const mrLink = link(`merge request !${a.iid}`, `${d.project_url}/merge_requests/${a.iid}`);
  return { text: slackLinks(`${d.user?.username} ${a.state} ${mrLink} in ${project}: *${firstLine(a.title)}*`), attachments: [] };
}

function noteMessage(d: Data, project: string): Omit<SlackMessage, 'channel' | 'username'> | null {
  const a = d.object_attributes ?? {};
  let target: string;
  let title: unknown;
  switch (a.noteable_type) {
    case 'Commit': target = `commit ${short(d.commit?.id)}`; title = d.commit?.message; break;
    case 'Issue': target = `issue #${d.issue?.iid}`; title = d.issue?.title; break;
    case 'MergeRequest': target = `merge request !${d.merge_request?.iid}`; title = d.merge_request?.title; break;
    case 'Snippet': target = `snippet #${d.snippet?.id}`; title = d.snippet?.title; break;
    default: return null;
  }
  return {
    text: slackLinks(`${d.user?.username} commented on ${link(target, a.url)} in ${project}: *${firstLine(title)}*`),
    attachments: [{ text: slackLinks(String(a.note ?? '')), color: '#345' }],
  };
}

/** Build and pipeline messages: the text in an attachment coloured by the outcome, and as the fallback. */
function statusMessage(text: string, status: unknown): Omit<SlackMessage, 'channel' | 'username'> {
  const formatted = slackLinks(text);
  return { text: '', attachments: [{ text: formatted, color: status === 'success' ? 'good' : 'danger' }], fallback: formatted };
}

const humanized = (status: unknown) => (status === 'success' ? 'passed' : String(status));

/**
 * A build's message. 8.13 decided on, and showed, `commit.status` and `commit.duration` (the pipeline's), which its
 * pipeline had already updated when the build's hook ran; Gantry's build data carries the pipeline as it was before the
 * build's change, so the message follows the build's own outcome and duration (build_status, build_duration).
 */
function buildMessage(d: Data, project: string, p: SlackProperties): Omit<SlackMessage, 'channel' | 'username'> | null {
  const status = d.build_status;
  if (!(status === 'failed' || (status === 'success' && !checked(p.notify_only_broken_builds)))) return null;
  const url = String(d.project_url);
  const refType = d.tag ? 'tag' : 'branch';
  const duration = typeof d.build_duration === 'number' ? Math.round(d.build_duration) : d.build_duration;
  return statusMessage(
    `${project}: Commit ${link(short(d.sha), `${url}/commit/${d.sha}/builds`)} of ${link(d.ref, `${url}/commits/${d.ref}`)} ${refType} by ` +
      `${d.commit?.author_name} ${humanized(status)} in ${seconds(duration)}`,
    status,
  );
}

function pipelineMessage(d: Data, p: SlackProperties): Omit<SlackMessage, 'channel' | 'username'> | null {
  const a = d.object_attributes ?? {};
  if (!(a.status === 'failed' || (a.status === 'success' && !checked(p.notify_only_broken_pipelines)))) return null;
  const url = String(d.project?.web_url);
  const refType = a.tag ? 'tag' : 'branch';
  // 8.13 read commit.author_name, which its pipeline data did not have (the name came out blank): the author's name here
  const user = d.commit?.author_name ?? d.commit?.author?.name ?? '';
  return statusMessage(
    `${link(d.project?.path_with_namespace, url)}: Pipeline ${link(short(a.sha), `${url}/pipelines/${a.id}`)} of ${link(a.ref, `${url}/commits/${a.ref}`)} ` +
      `${refType} by ${user} ${humanized(a.status)} in ${seconds(a.duration)}`,
    a.status,
  );
}

/**
 * The Slack message of an event's hook data for a service with these settings, or null when 8.13 sends none (no
 * webhook, an issue or merge request `update`, a build or pipeline that is neither failed nor (unless only broken ones
 * are wanted) successful). `projectName` is the project's name with namespace without spaces (`Group/project`), as 8.13.
 */
export function slackMessage(event: string, data: Data, p: SlackProperties, projectName: string): SlackMessage | null {
  if (blank(p.webhook)) return null;
  const projectUrl = String(data.project?.web_url ?? data.repository?.homepage ?? '');
  const d: Data = { ...data, project_url: projectUrl };
  const project = link(projectName, projectUrl);
  let m: Omit<SlackMessage, 'channel' | 'username'> | null;
  switch (event) {
    case 'push': case 'tag_push': m = pushMessage(d, project); break;
    case 'issue': m = d.object_attributes?.action === 'update' ? null : issueMessage(d, project); break;
    case 'merge_request': m = d.object_attributes?.action === 'update' ? null : mergeMessage(d, project); break;
    case 'note': m = noteMessage(d, project); break;
    case 'build': m = buildMessage(d, project, p); break;
    case 'pipeline': m = pipelineMessage(d, p); break;
    default: m = null;
  }
  if (!m) return null;
  const channel = p[`${event}_channel`] || p.channel;
  const out: SlackMessage = { ...m };
  if (!blank(channel)) out.channel = String(channel);
  if (!blank(p.username)) out.username = String(p.username);
  return out;
}
