// A node:test reporter for `TEST_TIMES=1 npm test` (scripts/test.sh): each file's time, the sum of
// its top-level tests, longest first, to keep the script's list of files to start first true.
// Node 20's own reporters give each test's time but not which file it came from.
import path from 'node:path';
import type { TestEvent } from 'node:test/reporters';

export default async function* fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const byFile = new Map<string, number>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    if (event.data.nesting !== 0 || event.data.file === undefined) continue;
    byFile.set(event.data.file, (byFile.get(event.data.file) ?? 0) + event.data.details.duration_ms);
  }
  const root = process.cwd();
  for (const [file, ms] of [...byFile].sort((a, b) => b[1] - a[1])) {
    // The compiled copy's name (dist/test-run-…/test/x.test.js) as the source's.
    const source = path
      .relative(root, file)
      .replace(/^dist\/test-run-[^/]+\//, '')
      .replace(/\.js$/, '.ts');
    yield `${(ms / 1000).toFixed(1).padStart(7)} s  ${source}\n`;
  }
}
