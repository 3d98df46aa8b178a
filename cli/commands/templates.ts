/**
 * gantry template list|show: the server's file templates (.gitignore, .gitlab-ci.yml, licenses; GET /templates/...).
 * `show` prints the text alone, so it can be written to a file: `gantry template show gitignore Node > .gitignore`.
 */
import type { Command } from 'commander';
import type { Factory } from '../client.js';
import { UsageError } from '../errors.js';
import { printJson, printList } from '../output.js';
import { connectionFlags } from './common.js';

/** The kinds the CLI takes (singular or plural) and their API segments. */
const KINDS: Record<string, string> = {
  gitignore: 'gitignores', gitignores: 'gitignores',
  'gitlab-ci': 'gitlab_ci_ymls', 'gitlab-ci-yml': 'gitlab_ci_ymls', gitlab_ci_ymls: 'gitlab_ci_ymls',
  license: 'licenses', licenses: 'licenses',
};
const KIND_ARG = 'gitignore, gitlab-ci or license';

function kindOf(kind: string): string {
  const segment = KINDS[kind.toLowerCase()];
  if (!segment) throw new UsageError(`unknown template kind "${kind}": use ${KIND_ARG}`);
  return segment;
}

interface License { key: string; name: string; popular: boolean; content: string }

/** Registers the verbs of the `template` noun (main.ts creates the noun and imports this module only when it is used). */
export function registerTemplates(template: Command, factory: Factory): void {
  const { io } = factory;
  const client = (cmd: Command) => factory.client(connectionFlags(cmd));

  template.command('list').alias('ls').description('list the templates of a kind')
    .argument('<kind>', KIND_ARG)
    .option('--popular', 'licenses: only the popular ones')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry template list gitignore\n  gantry template list license --popular')
    .action(async (kind: string, o: { popular?: boolean; json?: boolean }, cmd: Command) => {
      const segment = kindOf(kind);
      if (segment === 'licenses') {
        const licenses = await client(cmd).get<License[]>('/templates/licenses', o.popular ? { popular: 'true' } : {});
        printList(io, licenses, [
          { header: 'key', value: (l) => l.key },
          { header: 'name', value: (l) => l.name, max: 50 },
          { header: 'popular', value: (l) => (l.popular ? 'yes' : '') },
        ], { json: o.json, noun: 'licenses' });
        return;
      }
      const names = await client(cmd).get<Array<{ name: string }>>(`/templates/${segment}`);
      printList(io, names, [{ header: 'name', value: (t) => t.name }], { json: o.json, noun: 'templates' });
    });

  template.command('show').description('print a template\'s text (a license with the year, project and holder filled in)')
    .argument('<kind>', KIND_ARG)
    .argument('<name>', 'the template\'s name (see `gantry template list KIND`), or a license key such as mit')
    .option('--project <name>', 'licenses: the project name to fill in')
    .option('--fullname <name>', 'licenses: the copyright holder (default: your name on the server)')
    .option('--json', 'print the raw API JSON')
    .addHelpText('after', '\nExamples:\n  gantry template show gitignore Node > .gitignore\n  gantry template show license mit --fullname "ACME Inc." > LICENSE')
    .action(async (kind: string, name: string, o: { project?: string; fullname?: string; json?: boolean }, cmd: Command) => {
      const segment = kindOf(kind);
      const query: Record<string, string> = {};
      if (o.project) query.project = o.project;
      if (o.fullname) query.fullname = o.fullname;
      const found = await client(cmd).get<{ content: string }>(`/templates/${segment}/${encodeURIComponent(name)}`, query);
      if (o.json) return printJson(io, found);
      io.out(found.content.endsWith('\n') ? found.content : `${found.content}\n`);
    });
}
