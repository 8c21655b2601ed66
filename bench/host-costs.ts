// What the host charges for the two things every request leans on besides the CPU: a system call
// (each read and write of a socket, each pread of SQLite's) and a page's first touch (each page of
// the database file a process maps and reads for the first time, each page the heap grows by).
// Machines of one kind differ here by several times from one day to the next (a virtual machine's
// page faults and system calls cost what its hypervisor makes them cost), and a short closed-loop
// round over 1 M users touches new pages all along: a run records both, measured as it starts,
// so two runs that disagree can say whether the host did.
import fs from 'node:fs';
import { median } from './stats.js';

export interface HostCosts {
  /** Microseconds for one system call: a one-byte read of /dev/zero, Node's binding included. */
  syscall_us: number;
  /** Microseconds for the first touch of one 4 KiB page of anonymous memory (a page fault). */
  page_fault_us: number;
}

const PAGE = 4096;

function syscallMicroseconds(calls: number): number {
  const fd = fs.openSync('/dev/zero', 'r');
  try {
    const byte = Buffer.alloc(1);
    const started = process.hrtime.bigint();
    for (let i = 0; i < calls; i++) fs.readSync(fd, byte, 0, 1, null);
    return Number(process.hrtime.bigint() - started) / 1000 / calls;
  } finally {
    fs.closeSync(fd);
  }
}

function pageFaultMicroseconds(pages: number): number {
  // Not zeroed, and over the size malloc serves from its own heap: fresh pages from the kernel,
  // each mapped on its first write.
  const block = Buffer.allocUnsafeSlow(pages * PAGE);
  const started = process.hrtime.bigint();
  for (let offset = 0; offset < block.length; offset += PAGE) block[offset] = 1;
  return Number(process.hrtime.bigint() - started) / 1000 / pages;
}

/** The median of a few short samples of each: a moment's burst of someone else's work moves one sample, not the figure. */
export function measureHostCosts(samples = 5): HostCosts {
  const round = (x: number) => Math.round(x * 100) / 100;
  return {
    syscall_us: round(median(Array.from({ length: samples }, () => syscallMicroseconds(20_000)))),
    page_fault_us: round(median(Array.from({ length: samples }, () => pageFaultMicroseconds(4096)))),
  };
}
