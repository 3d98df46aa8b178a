// The paced (open-loop) load generator of lib.mjs's paced(), run as a process of its own: its heap holds nothing but
// this run's requests, so no garbage of the bench's other clients (autocannon's rounds) pauses it and the pauses it
// measures are the daemon's or the machine's. Reads { origin, method, headers, rate, seconds, connections, paths,
// bodies } as JSON on stdin, writes { latencies, errors } as JSON on stdout.
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

/**
 * One request every 1000/rate ms, the i-th to paths[i] (with bodies[i]), each timed from its *scheduled* start (as
 * wrk2 does), so a slow response delays nothing else and queueing shows in the percentiles.
 */
async function load({ origin, method, headers, rate, seconds, connections, paths, bodies }) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const total = Math.round(rate * seconds);
  const interval = 1000 / rate;
  const latencies = [];
  let errors = 0;
  const t0 = performance.now() + 50;
  const inflight = [];
  // Each tick sends every request whose scheduled time has come (timers are ~1 ms coarse; no busy waiting, which
  // would take a core from the daemon on a 2-core machine).
  let i = 0;
  while (i < total) {
    const now = performance.now();
    while (i < total && t0 + i * interval <= now) {
      const scheduled = t0 + i * interval;
      inflight.push(
        pool.request({ method, path: paths[i], headers, body: bodies?.[i] ?? undefined }).then(
          async (res) => {
            await res.body.dump();
            if (res.statusCode >= 300) errors += 1;
            latencies.push(performance.now() - scheduled);
          },
          () => { errors += 1; },
        ),
      );
      i += 1;
    }
    if (i < total) await new Promise((r) => setTimeout(r, Math.max(0, t0 + i * interval - performance.now())));
  }
  await Promise.all(inflight);
  await pool.close();
  return { latencies, errors };
}

let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
process.stdout.write(JSON.stringify(await load(JSON.parse(input))));
