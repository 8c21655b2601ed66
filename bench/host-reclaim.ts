// The host's proactive reclaim. Some virtual machines (this project's reference machine among
// them) run DAMON with a `pageout` scheme: a kernel thread that evicts every page left untouched
// for a while, page cache included. A database file read at random (the benchmark draws users
// uniformly over 1.7 GB) is mostly such pages, so reads that found their page in memory a moment
// ago now wait for the disk, on the event loop, in every server measured alike, and those waits
// dominate the open-loop tails.
// That is the host's policy, not the service's cost, so a run says which it measured, and
// `--pause-reclaim` turns it off for the run and back on afterwards (root only).
import fs from 'node:fs';
import path from 'node:path';

const KDAMONDS = '/sys/kernel/mm/damon/admin/kdamonds';

export interface HostReclaim {
  /** Kernel DAMON threads running a pageout scheme when the run began. */
  found: number;
  /** Whether the run paused them. */
  paused: boolean;
}

function read(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The state files of running kdamonds that page out. */
function pagingOut(root: string): string[] {
  let ids: string[];
  try {
    ids = fs.readdirSync(root).filter((d) => /^\d+$/.test(d));
  } catch {
    return [];
  }
  return ids
    .map((id) => path.join(root, id))
    .filter((k) => read(path.join(k, 'state')) === 'on')
    .filter((k) => {
      const contexts = path.join(k, 'contexts');
      const schemes = fs.existsSync(contexts)
        ? fs
            .readdirSync(contexts)
            .filter((c) => /^\d+$/.test(c))
            .map((c) => path.join(contexts, c, 'schemes'))
        : [];
      return schemes.some((s) => fs.existsSync(s) && fs.readdirSync(s).some((n) => /^\d+$/.test(n) && read(path.join(s, n, 'action')) === 'pageout'));
    })
    .map((k) => path.join(k, 'state'));
}

/**
 * Finds the host's proactive reclaim and, when asked, pauses it until the returned resume() runs
 * (also on exit). `root` is the kdamonds directory of DAMON's sysfs interface (tests give another).
 */
export function holdReclaim(pause: boolean, log: (msg: string) => void, root = KDAMONDS): { reclaim: HostReclaim; resume(): void } {
  const states = pagingOut(root);
  if (states.length === 0) return { reclaim: { found: 0, paused: false }, resume: () => {} };
  if (!pause) {
    log(
      `the host pages out idle memory (DAMON, ${states.length} thread${states.length > 1 ? 's' : ''}): database reads will wait for the disk now and then; --pause-reclaim turns it off for the run`,
    );
    return { reclaim: { found: states.length, paused: false }, resume: () => {} };
  }
  for (const s of states) fs.writeFileSync(s, 'off');
  log(`paused the host's proactive reclaim (DAMON pageout) for the run`);
  let resumed = false;
  const resume = () => {
    if (resumed) return;
    resumed = true;
    for (const s of states) {
      try {
        fs.writeFileSync(s, 'on');
      } catch (err) {
        log(`could not turn the host's reclaim back on (${s}): ${(err as Error).message}`);
      }
    }
  };
  process.once('exit', resume);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      resume();
      process.exit(130);
    });
  return { reclaim: { found: states.length, paused: true }, resume };
}
