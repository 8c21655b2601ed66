import { ensureDataset } from '/work/main/bench/dataset.ts';
const t = Date.now();
const d = await ensureDataset(process.argv[2] as 'sqlite', Number(process.argv[3]));
console.log(d.apiKey, Date.now() - t);
