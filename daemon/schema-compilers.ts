/**
 * Route schema compilers that compile on first use: Fastify's own (ajv for validation, fast-json-stringify for
 * responses), wrapped so that registering ~300 routes costs no compilation at start. Compiling every schema up front
 * took about 450 ms of the daemon's start; now the first request of a route compiles its schema (about 1 ms). The
 * daemon does not compile the rest in the background (they held about 20 MB resident for routes an installation may
 * never call); `compilePendingSchemas` compiles every pending one of a daemon (the tests). What is pending is the
 * daemon's (ctx.state): a process that builds many apps (the tests) never keeps another app's schemas.
 * A schema that cannot compile still fails the suite: test/unit/schema-compilers.test.ts compiles every route's.
 */
import ValidatorSelector from '@fastify/ajv-compiler';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { stateSlot, type AppContext } from './context.js';

type Compile<F> = (route: RouteSchema) => F;
interface RouteSchema {
  schema: unknown;
  method: string;
  url: string;
  httpPart?: string;
}
type Validate = ((data: unknown) => unknown) & { errors?: unknown };
type Serialize = (data: unknown) => string;

/** A daemon's compilations not done yet (forced by compilePendingSchemas). */
const PENDING = stateSlot('pending schema compilations', () => new Set<() => void>());
type Pending = Set<() => void>;

function deferred<F extends (...args: never[]) => unknown>(pending: Pending, compile: () => F, wrap: (get: () => F) => F): F {
  let fn: F | undefined;
  const get = () => {
    if (!fn) {
      fn = compile();
      pending.delete(force);
    }
    return fn;
  };
  const force = () => void get();
  pending.add(force);
  return wrap(get);
}

type AnyFactory = (...args: unknown[]) => Compile<unknown>;

/** Fastify's validator compiler factory, compiling each route schema on its first use. */
export function lazyValidatorFactory(ctx: AppContext): AnyFactory {
  const pending = ctx.state.get(PENDING);
  const base = (ValidatorSelector as unknown as () => AnyFactory)();
  return (...args: unknown[]) => {
    const compiler = base(...args) as Compile<Validate>;
    return (route: RouteSchema) =>
      deferred(pending, () => compiler(route), (get) => {
        const validate: Validate = (data: unknown) => {
          const fn = get();
          const result = fn(data);
          validate.errors = fn.errors;
          return result;
        };
        return validate;
      });
  };
}

/** Fastify's serializer compiler factory, compiling each response schema on its first use. */
export function lazySerializerFactory(ctx: AppContext): AnyFactory {
  const pending = ctx.state.get(PENDING);
  const base = (SerializerSelector as unknown as () => AnyFactory)();
  return (...args: unknown[]) => {
    const compiler = base(...args) as Compile<Serialize>;
    return (route: RouteSchema) => deferred(pending, () => compiler(route), (get) => (data: unknown) => get()(data));
  };
}

/** Compile every schema of this daemon not compiled yet; `sliceMs` > 0 yields to the event loop between slices of that length. */
export async function compilePendingSchemas(ctx: AppContext, sliceMs = 0): Promise<number> {
  const pending = ctx.state.get(PENDING);
  let n = 0;
  let start = performance.now();
  for (const force of [...pending]) {
    force();
    n++;
    if (sliceMs > 0 && performance.now() - start > sliceMs) {
      await new Promise((r) => setImmediate(r));
      start = performance.now();
    }
  }
  return n;
}
