/** gantry api: any API path with the saved login, as `gh api` / `glab api`. The work is in ../api-request.ts, loaded on use. */
import type { Command } from 'commander';
import type { Factory } from '../client.js';
import { connectionFlags } from './common.js';

/** commander collector for a repeatable option. */
const repeat = (value: string, previous: string[] = []) => [...previous, value];

/** Registers `api`. */
export function registerApi(program: Command, factory: Factory): void {
  program
    .command('api')
    .description('send any request to the API (v3, the runner API /ci/api/v1 or /oauth) and print the answer')
    .argument('<endpoint>', 'a path such as projects/:id/issues (under /api/v3 unless it starts with /ci/, /oauth/ or /api/)')
    .option('-X, --method <method>', 'HTTP method (default: GET, or POST when fields or --input are given without --paginate)')
    .option('-f, --raw-field <key=value>', 'a string field (repeatable; in the query string for GET)', repeat)
    .option('-F, --field <key=value>', 'a typed field: true, false, null and numbers as JSON, @file (or @-) for a file\'s text; key[]=v builds a list', repeat)
    .option('-H, --header <key:value>', 'an extra request header (repeatable)', repeat)
    .option('--input <file>', 'send the file (- for stdin) as the request body')
    .option('--paginate', 'follow X-Next-Page and print every page joined into one JSON array')
    .option('-i, --include', 'print the status line and the response headers before the body')
    .option('-q, --jq <expr>', 'filter the JSON through a jq expression (strings printed raw)')
    .option('--silent', 'print nothing of the body')
    .option('-R, --repo <project>', 'the project :id stands for (default: the project of the clone you are in)')
    .addHelpText('after', `
Placeholders: :id (the project, URL-encoded), :fullpath, :namespace, :repo and :branch (the current branch) come
from -R or the clone you are in. JSON is pretty-printed on a terminal and passed through as it came when piped.
An answer of 400 or more exits with code 1 and prints the body on stderr.

Examples:
  gantry api projects/:id/issues --paginate --jq '.[] | "#\\(.iid) \\(.title)"'
  gantry api -X POST projects/:id/issues -f title="Flaky test" -F confidential=true
  gantry api user -i
  gantry api /ci/api/v1/builds/register -X POST -f token=RUNNER_TOKEN`)
    .action(async (endpoint: string, o: ApiCommandOptions, cmd: Command) => {
      const { runApi } = await import('../api-request.js');
      await runApi(factory.io, await factory.freshConnection(connectionFlags(cmd)), endpoint, o);
    });
}

/** The options of `gantry api` as commander parses them. */
export interface ApiCommandOptions {
  method?: string;
  rawField?: string[];
  field?: string[];
  header?: string[];
  input?: string;
  paginate?: boolean;
  include?: boolean;
  jq?: string;
  silent?: boolean;
  repo?: string;
}
