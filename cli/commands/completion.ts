/** gantry completion bash|zsh|fish, and the hidden `__complete` its scripts call (the work is in ../completion.ts, loaded on use). */
import type { Command } from 'commander';
import type { Factory } from '../client.js';

/** Registers `completion` and `__complete`. */
export function registerCompletion(program: Command, factory: Factory): void {
  const { io } = factory;
  program
    .command('completion')
    .description('print the shell completion script for bash, zsh or fish')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText('after', `
Examples:
  source <(gantry completion bash)                                   # in ~/.bashrc
  source <(gantry completion zsh)                                    # in ~/.zshrc, after compinit
  gantry completion fish > ~/.config/fish/completions/gantry.fish

Commands, nouns, verbs and flags complete from the program itself; project paths (after -R/--repo, or where a
command takes a project) from the server of the active profile, in one short request.`)
    .action(async (shell: string) => {
      const { completionScript } = await import('../completion.js');
      io.out(completionScript(shell));
    });

  program
    .command('__complete', { hidden: true })
    .description('the candidates for the last of the words (used by the completion scripts)')
    .argument('[words...]')
    .allowUnknownOption()
    .action(async (words: string[]) => {
      const { completions } = await import('../completion.js');
      for (const c of await completions(program, factory, words.length ? words : [''])) io.out(`${c}\n`);
    });
}
