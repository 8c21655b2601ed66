// Node's process.nextTick queues each tick as an object literal whose first two keys are computed
// (symbols: the async ids). V8 compiles nextTick once it is hot; when that happens under traffic,
// about half of the processes end up defining those fields through V8's runtime on every tick,
// with a map migration each time, instead of in the compiled code. An API answer queues 9 or 10
// ticks (Node's streams on the request and response), and in such a process a cached read executes
// some 13 % more instructions than in another, for the process's whole life (docs/performance.md,
// "Two steady states"). Queuing ticks in a burst before the server takes traffic has V8 compile
// nextTick first, on the ticks' settled shape: in the processes measured, none came up in the slow
// state after it. It takes a few tens of milliseconds, once, at start.
const BURSTS = 50;
const TICKS_PER_BURST = 4000;

/** Runs nextTick hot until V8 has compiled it (before any request is served). */
export async function warmNextTick(): Promise<void> {
  const noop = () => {};
  for (let burst = 0; burst < BURSTS; burst++) {
    for (let i = 0; i < TICKS_PER_BURST; i++) process.nextTick(noop);
    // A turn of the event loop between bursts: V8 compiles on another thread and installs the code between turns.
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
