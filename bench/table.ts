// Prints a results file as the Markdown tables docs/performance.md uses.
// `node --import tsx bench/table.ts bench/data/results/FILE.json`
import fs from 'node:fs';
import { markdownTable, report, type BenchResult } from './report.js';

const file = process.argv[2];
if (!file) throw new Error('usage: bench/table.ts RESULT.json');
process.stdout.write(report(JSON.parse(fs.readFileSync(file, 'utf8')) as BenchResult, markdownTable));
