/**
 * Shell completion, as cobra-based CLIs (gh, glab) do it: `gantry completion bash|zsh|fish` prints a small script that
 * asks `gantry __complete -- <words>` for the candidates at each TAB. The program answering loads only the noun the
 * words name (main.ts's lazy nouns), walks commander's tree for commands, verbs and flags, and completes project
 * paths from the API (one short request, only where a project goes). Loaded only by those two commands.
 */
import type { Command, Option } from 'commander';
import type { Factory } from './client.js';
import { UsageError } from './errors.js';
import { loadConfig } from './profiles.js';

/** Options whose value is a project path. */
const PROJECT_OPTIONS = new Set(['--repo', '--target-project', '--project']);

/** The scripts, by shell. */
const SCRIPTS: Record<string, string> = {
  bash: `# gantry completion for bash: add to ~/.bashrc
#   source <(gantry completion bash)
_gantry_complete() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local IFS=$'\\n'
  COMPREPLY=($(compgen -W "$(gantry __complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)" -- "$cur"))
}
complete -o default -F _gantry_complete gantry
`,
  zsh: `#compdef gantry
# gantry completion for zsh: add to ~/.zshrc (after compinit)
#   source <(gantry completion zsh)
_gantry() {
  local -a candidates
  candidates=("\${(@f)$(gantry __complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -- "\${candidates[@]}"
}
compdef _gantry gantry
`,
  fish: `# gantry completion for fish: save as ~/.config/fish/completions/gantry.fish
#   gantry completion fish > ~/.config/fish/completions/gantry.fish
function __gantry_complete
    set -l words (commandline -opc) (commandline -ct)
    gantry __complete -- $words[2..-1] 2>/dev/null
end
complete -c gantry -f -a '(__gantry_complete)'
`,
};

/** The completion script for a shell. */
export function completionScript(shell: string): string {
  const script = SCRIPTS[shell];
  if (!script) throw new UsageError(`no completion for "${shell}"`, 'use bash, zsh or fish');
  return script;
}

/** An option of `cmd` or of the program by its flag (`--state`, `-s`, `--state=x`). */
function findOption(cmd: Command, program: Command, word: string): Option | undefined {
  const flag = word.split('=')[0];
  return [...cmd.options, ...program.options].find((o) => o.long === flag || o.short === flag);
}

/** The candidates for the last word of `words` (the words after `gantry`, the last one being completed). */
export async function completions(program: Command, factory: Factory, words: string[]): Promise<string[]> {
  let cmd = program;
  let positional = 0;
  let valueOf: Option | null = null;
  for (const w of words.slice(0, -1)) {
    if (valueOf) {
      valueOf = null;
      continue;
    }
    if (w.startsWith('-')) {
      const o = findOption(cmd, program, w);
      if (o && (o.required || o.optional) && !w.includes('=')) valueOf = o;
      continue;
    }
    const sub = cmd.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (sub) {
      cmd = sub;
      positional = 0;
    } else positional++;
  }
  const current = words[words.length - 1] ?? '';
  const prefixed = (list: string[]) => [...new Set(list)].filter((c) => c.startsWith(current));
  if (valueOf) {
    if (PROJECT_OPTIONS.has(valueOf.long ?? '')) return projects(factory, current);
    if (valueOf.long === '--profile') return prefixed(Object.keys(loadConfig(factory.io.env).profiles));
    return [];
  }
  if (current.startsWith('-')) {
    return prefixed([...cmd.options, ...program.options].filter((o) => !o.hidden).flatMap((o) => [o.long ?? o.short ?? '']).concat(['--help']));
  }
  const visible = cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
  if (visible.length > 0) {
    const names = visible.map((c) => c.name());
    if (cmd === program) names.push('help', ...Object.keys(loadConfig(factory.io.env).aliases ?? {}));
    return prefixed(names);
  }
  if (cmd.registeredArguments[positional]?.name() === 'project') return projects(factory, current);
  return [];
}

/** Project paths starting with `prefix`, from one short API request (nothing when not logged in or the server is slow). */
async function projects(factory: Factory, prefix: string): Promise<string[]> {
  try {
    const { HttpClient } = await import('../shared/http.js');
    const { authHeaders } = await import('./client.js');
    const connection = await factory.freshConnection({});
    const http = new HttpClient({ baseUrl: `${connection.url}/api/v3`, headers: authHeaders(connection), timeoutMs: 2000 });
    try {
      const search = prefix.slice(prefix.lastIndexOf('/') + 1);
      const res = await http.request<Array<{ path_with_namespace: string }>>('GET', '/projects', { query: { search: search || undefined, per_page: 50, simple: true, order_by: 'last_activity_at' } });
      return res.data.map((p) => p.path_with_namespace).filter((p) => p.toLowerCase().startsWith(prefix.toLowerCase()));
    } finally {
      await http.close();
    }
  } catch {
    return [];
  }
}
