/**
 * `--jq EXPR`: a jq program run over JSON through @michaelhomer/jqjs, a pure-JavaScript jq (most of the language:
 * paths, pipes, select, map, object construction, string interpolation, reduce, the common built-ins). Imported only
 * when --jq is given. Output as `jq -r` prints it: strings raw, everything else as JSON.
 */
import { UsageError, CliError } from './errors.js';

/** Run `program` over `input`; one output text per value it yields. */
export async function runJq(program: string, input: unknown, pretty: boolean): Promise<string[]> {
  const { default: jq } = await import('@michaelhomer/jqjs');
  let filter: (input: unknown) => Iterable<unknown>;
  try {
    filter = jq.compile(program);
  } catch (e) {
    throw new UsageError(`cannot compile the jq expression ${JSON.stringify(program)}${reason(e)}`, 'see the jq manual: `.[] | .name`, `map(select(.state == "opened"))`, `.[0].id`');
  }
  const out: string[] = [];
  try {
    for (const value of filter(input)) out.push(typeof value === 'string' ? value : JSON.stringify(value, null, pretty ? 2 : undefined) ?? 'null');
  } catch (e) {
    throw new CliError(`the jq expression failed${reason(e)}`, 'check it against the JSON printed without --jq');
  }
  return out;
}

/** ": <message>" of whatever jqjs threw (it sometimes throws plain values). */
function reason(e: unknown): string {
  const text = e instanceof Error ? e.message : typeof e === 'string' ? e : e && typeof e === 'object' && 'message' in e ? String((e as { message: unknown }).message) : '';
  return text && text !== 'undefined' ? `: ${text}` : '';
}
