/** gantry-runner: the runner agent (register, run builds, unregister). Only --help exists until the CI issue. */
import { Command } from 'commander';

/** The gantry-runner command line. */
export async function main(argv: string[]): Promise<void> {
  new Command('gantry-runner')
    .description('Gantry runner agent: registers with a Gantry (or GitLab 8.x) instance and runs CI builds (coming with the CI issue)')
    .parse(argv);
}
