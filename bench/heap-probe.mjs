// Loaded into a measured server with `node --import` (the service and the ceiling servers alike):
// counts the bytes its JavaScript heap has allocated, for the benchmark's bytes per request.
//
// Node 20's heap statistics have no running total of allocations, so the total is rebuilt from the
// collector's own accounts (v8.GCProfiler): every collection reports the heap's used size before and
// after it, so what was allocated up to now is what all collections freed plus what is in use now.
// Objects a collection keeps (promoted, compacted) stay in the used size and are counted once.
// Buffers' backing stores live outside the heap and are not counted: the bytes of a kept answer
// (encoded once, src/http/cache-headers.ts) and a miss's encoded body, about its length once per miss.
//
// On SIGUSR2 the probe appends the running total, as one line `allocated=N`, to the file named by
// BENCH_HEAP_FILE; the benchmark signals before and after a run and divides the difference by the
// requests answered in between.
import fs from 'node:fs';
import v8 from 'node:v8';

const file = process.env.BENCH_HEAP_FILE;
if (file) {
  let freed = 0;
  let profiler = new v8.GCProfiler();
  profiler.start();
  process.on('SIGUSR2', () => {
    const report = profiler.stop();
    profiler = new v8.GCProfiler();
    profiler.start();
    for (const gc of report?.statistics ?? []) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
    fs.appendFileSync(file, `allocated=${freed + v8.getHeapStatistics().used_heap_size}\n`);
  });
}
