// Node's process.nextTick queues each tick as an object literal whose first two keys are computed
// (symbols: the async ids). Left to settle under traffic, about half of the processes ended up
// defining those fields through V8's runtime on every tick, with a map migration each time, instead
// of in compiled code. An API answer queues 9 or 10 ticks (Node's streams on the request and
// response), and in such a process a cached read executed some 13 % more instructions than in
// another, for the process's whole life (docs/performance.md, "Against the build before…").
// Queuing ticks of every shape Node's streams queue (no argument up to three) in bursts before
// the server takes traffic settles the tick objects' shape and has V8 compile nextTick for all of
// them: in the processes measured, none came up in the slow state after it. A few tens of
// milliseconds, once, at start.
const BURSTS = 50;
const TICKS_PER_BURST = 1000;

/** Runs nextTick hot, with each number of arguments it is given, until V8 has compiled it (before any request is served). */
export async function warmNextTick(): Promise<void> {
  const noop = (..._args: unknown[]) => {};
  const argument = {};
  for (let burst = 0; burst < BURSTS; burst++) {
    for (let i = 0; i < TICKS_PER_BURST; i++) {
      process.nextTick(noop);
      process.nextTick(noop, argument);
      process.nextTick(noop, argument, argument);
      process.nextTick(noop, argument, argument, argument);
    }
    // A turn of the event loop between bursts: V8 compiles on another thread and installs the code between turns.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
