// Summarises a V8 .cpuprofile (from `npm run bench -- --cpu-prof DIR`): the functions with the most
// self time, and the inclusive time of a few places worth watching, as shares of the busy time.
// `node --import tsx bench/profile-summary.ts FILE.cpuprofile [top]`
import fs from 'node:fs';

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
}

const file = process.argv[2];
if (!file) throw new Error('usage: profile-summary.ts FILE.cpuprofile [top]');
const top = Number(process.argv[3] ?? 30);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const short = (url: string) =>
  url
    .replace(/^.*node_modules\//, '~/')
    .replace(/^.*\/(src|dist)\//, '$1/')
    .replace(/^file:\/\//, '');
const label = (n: Node) => `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`;

const total = profile.nodes.reduce((s, n) => s + n.hitCount, 0);
const idle = profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').reduce((s, n) => s + n.hitCount, 0);
const busy = total - idle;

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
for (const n of profile.nodes) {
  if (n.hitCount === 0 || n.callFrame.functionName === '(idle)') continue;
  self.set(label(n), (self.get(label(n)) ?? 0) + n.hitCount);
  // Each sample counts once per distinct function on its stack.
  const seen = new Set<string>();
  for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
    const l = label(byId.get(id)!);
    if (seen.has(l)) continue;
    seen.add(l);
    inclusive.set(l, (inclusive.get(l) ?? 0) + n.hitCount);
  }
}
const pct = (x: number) => `${((x / busy) * 100).toFixed(1).padStart(5)} %`;
process.stdout.write(`busy ${((busy / total) * 100).toFixed(0)} % of samples\n\nself time\n`);
for (const [l, h] of [...self].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(h)}  ${l}\n`);
process.stdout.write('\ninclusive time\n');
for (const [l, h] of [...inclusive].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(h)}  ${l}\n`);
