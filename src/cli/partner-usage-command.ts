// `idsvc partner usage <key> [--days N]`: a partner's calls per day (UTC) for up to 30 days, by
// operation and status class, and the peak use of each rate-limit budget; --json adds the hours.
import type { Command } from 'commander';
import { findPartner } from '../repositories/partners.js';
import { STATUS_CLASSES, type BudgetPeak } from '../repositories/usage.js';
import { partnerUsage, USAGE_DAYS, type UsagePoint } from '../services/usage.js';
import { CliError, print, type Out } from './output.js';
import { withContext } from './run.js';

const iso = (ms: number) => new Date(ms).toISOString();

/** "12/6000 (0.2 %)", or "-" when no call drew on the budget. */
export function budgetText(b: BudgetPeak): string {
  if (b.limit === 0) return '-';
  return `${b.used}/${b.limit} (${((100 * b.used) / b.limit).toFixed(1)} %)`;
}

function pointJson(p: UsagePoint) {
  return { start: iso(p.start), requests: p.requests, total: p.total, statuses: p.statuses, budgets: { proven: p.proven, unproven: p.unproven } };
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join('  ')).join('\n');
}

export function partnerUsageCommand(partner: Command, run: () => Out): void {
  partner
    .command('usage <key>')
    .description(`calls per day by operation and status, and the busiest use of each rate-limit budget (UTC; at most ${USAGE_DAYS} days)`)
    .option('--days <n>', `how many days, 1 to ${USAGE_DAYS}`, '7')
    .action(async (key: string, o: { days: string }) =>
      withContext(run(), async (ctx, out) => {
        const days = Number(o.days);
        if (!Number.isInteger(days) || days < 1 || days > USAGE_DAYS) throw new CliError(`--days must be a whole number from 1 to ${USAGE_DAYS}`);
        const p = await findPartner(ctx.db, key);
        if (!p) throw new CliError(`no partner with api_key or id ${key}`);
        const u = await partnerUsage(ctx.db, p.id, ctx.clock.now(), days);
        print(
          out,
          {
            api_key: p.api_key,
            days,
            operations: u.operations,
            totals: u.totals,
            daily: u.daily.map(pointJson),
            hourly: u.hourly.map(pointJson),
          },
          () => {
            const head = ['day (UTC)', 'requests', ...u.operations, ...STATUS_CLASSES, 'proven budget', 'key-only budget'];
            const line = (label: string, p: Pick<UsagePoint, 'requests' | 'total' | 'statuses'>, budgets: string[]) => [
              label,
              String(p.total),
              ...u.operations.map((op) => String(p.requests[op] ?? 0)),
              ...STATUS_CLASSES.map((c) => String(p.statuses[c])),
              ...budgets,
            ];
            const rows = u.daily.map((d) => line(iso(d.start).slice(0, 10), d, [budgetText(d.proven), budgetText(d.unproven)]));
            return [
              `partner ${p.id} (${p.name}): the last ${days} day${days === 1 ? '' : 's'}`,
              table([head, ...rows, line('total', u.totals, ['', ''])]),
            ].join('\n');
          },
        );
      }),
    );
}
