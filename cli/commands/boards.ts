/** gantry board list: the lists of a project's issue board (its label lists, by position; 8.13 has one board). */
import type { Command } from 'commander';
import type { Factory } from '../client.js';
import { printJson, printList, type Column } from '../output.js';
import { connectionFlags, idOrPath } from './common.js';

/** A board list as the API shows it. */
interface BoardList {
  id: number;
  label: { name: string; color: string; description: string | null };
  position: number;
}

const COLUMNS: Column<BoardList>[] = [
  { header: 'position', value: (l) => String(l.position) },
  { header: 'id', value: (l) => String(l.id) },
  { header: 'label', value: (l) => l.label.name },
  { header: 'color', value: (l) => l.label.color },
];

/** Adds the verbs of the `board` noun. */
export function registerBoards(board: Command, factory: Factory): void {
  const { io } = factory;
  board
    .command('list')
    .alias('ls')
    .description("list the lists of the project's issue board (Backlog and Done are always there and not shown)")
    .argument('<project>', 'id or namespace/path (default: the project of the clone you are in)')
    .option('--json', 'print the raw API JSON (the boards with their lists)')
    .action(async (project: string, o: { json?: boolean }, cmd: Command) => {
      const boards = await factory.client(connectionFlags(cmd)).get<{ id: number; lists: BoardList[] }[]>(`/projects/${idOrPath(project)}/boards`);
      if (o.json) return printJson(io, boards);
      const lists = boards.flatMap((b) => b.lists);
      printList(io, lists, COLUMNS, { json: false, noun: 'board lists' });
    });
}
