/**
 * `--jq EXPR`: the real jq (1.7.1, compiled to WebAssembly by the jq-wasm package), so a filter answers exactly as jq
 * does: `keys` is an array, a syntax error is an error, every builtin is there. Imported only when --jq is given.
 * Output as `jq -r` prints it: strings raw, everything else as JSON (indented on a terminal, one line per value in a
 * pipe).
 *
 * jq-wasm's own wrapper feeds jq its input and collects its output one byte at a time into a new array per byte
 * (quadratic: a few megabytes of `--paginate` output would take minutes), trims what jq printed, and drops jq's exit
 * status. So the Emscripten module it ships (dist/build/jq.js, version pinned) is loaded with that glue replaced:
 * input read by index, output into growing buffers, and the exit status kept, which tells a compile error (3) from a
 * runtime error (5).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { CliError, UsageError } from './errors.js';

/** What one run of jq printed, and its exit status. */
export interface JqRun {
  status: number;
  stdout: string;
  stderr: string;
}

interface JqModule {
  run(input: string, args: string[]): Promise<JqRun>;
}

/** The glue of jq-wasm 1.0.1 that is replaced: from its stdin buffer up to the end of its Module object. */
const GLUE_START = '        let stdinString = "";';
const GLUE_END = 'raw(jsonString, query, flags = []) { return runtimeInitPromise.then(() => rawImpl(jsonString, query, flags)); } };';

const GLUE = `
        let gantryIn = new Uint8Array(0), gantryInAt = 0;
        const gantrySink = () => { let buf = new Uint8Array(1 << 16), n = 0; return {
            put(c) { if (n === buf.length) { const b = new Uint8Array(buf.length * 2); b.set(buf); buf = b; } buf[n++] = c; },
            take() { const text = new TextDecoder("utf-8").decode(buf.subarray(0, n)); n = 0; return text; } }; };
        const gantryOut = gantrySink(), gantryErr = gantrySink();
        let runtimeInitResolve;
        const runtimeInitPromise = new Promise(resolve => { runtimeInitResolve = resolve; });
        function runImpl(input, args) { gantryIn = new TextEncoder().encode(input); gantryInAt = 0;
            const status = Module.callMain(args);
            return { status: typeof status === "number" ? status : 0, stdout: gantryOut.take(), stderr: gantryErr.take() }; }
        Module = { ...Module, noInitialRun: true, noExitRuntime: true, onRuntimeInitialized() { runtimeInitResolve(); }, printErr() { },
            preRun() { FS.init(() => (gantryInAt < gantryIn.length ? gantryIn[gantryInAt++] : null),
                c => { if (c !== null && c !== undefined) gantryOut.put(c); }, c => { if (c !== null && c !== undefined) gantryErr.put(c); }); },
            run(input, args) { return runtimeInitPromise.then(() => runImpl(input, args)); } };`;

let loaded: Promise<JqModule> | null = null;

/** jq's Emscripten module with Gantry's glue (loaded once per process). */
function jqModule(): Promise<JqModule> {
  loaded ??= (async () => {
    const require = createRequire(import.meta.url);
    const file = require.resolve('jq-wasm/dist/build/jq.js');
    const source = readFileSync(file, 'utf8');
    const start = source.indexOf(GLUE_START);
    const end = source.indexOf(GLUE_END);
    if (start < 0 || end < start) throw new CliError(`unexpected ${file}: --jq needs jq-wasm 1.0.1`, 'reinstall gantry (`npm install`)');
    const patched = source.slice(0, start) + GLUE + source.slice(end + GLUE_END.length);
    const module = { exports: {} as unknown };
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the pinned module's own CommonJS text, patched above
    new Function('module', 'exports', 'require', '__filename', '__dirname', patched)(module, module.exports, require, file, dirname(file));
    const factory = module.exports as () => Promise<JqModule>;
    return factory();
  })();
  return loaded;
}

/** Run jq with these arguments (its filter among them) over `input` (JSON text). */
export async function jq(input: string, args: string[]): Promise<JqRun> {
  return (await jqModule()).run(input, [...args, '/dev/stdin']);
}

/** Run `program` over `input` as `gantry api --jq` does; the text jq printed (each value ending with a newline). */
export async function runJq(program: string, input: unknown, pretty: boolean): Promise<string> {
  const r = await jq(JSON.stringify(input), ['-r', '-M', ...(pretty ? [] : ['-c']), program]);
  const message = r.stderr.trim().replace(/^jq: error: /, '').replace(/\njq: \d+ compile errors?$/, '');
  if (r.status === 3 || r.status === 2) {
    throw new UsageError(`cannot compile the jq expression ${JSON.stringify(program)}: ${message}`, 'see the jq manual: `.[] | .name`, `map(select(.state == "opened"))`, `.[0].id`');
  }
  if (r.status !== 0) {
    throw Object.assign(new CliError(`the jq expression failed: ${message.replace(/^jq: error \(at [^)]*\): /, '')}`, 'check it against the JSON printed without --jq'), { output: r.stdout });
  }
  return r.stdout;
}
