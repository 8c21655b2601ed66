// A partner's usage as charts drawn on the server (SVG, no script): requests per operation per day
// and per hour, answers by status class, and how much of each rate-limit budget was in use. Each
// chart is an image with a title and a summary for screen readers, followed by its numbers in a
// table (caption, headers with scope), so nothing is told by colour or shape alone.
import type { ComponentChildren } from 'preact';
import { STATUS_CLASSES, type BudgetPeak, type StatusClass } from '../../repositories/usage.js';
import type { UsagePoint, UsageSeries } from '../../services/usage.js';

const W = 600;
const H = 180;
const PAD = { left: 60, right: 8, top: 10, bottom: 24 };
/** Colour classes for operations, in order (site.css); more operations than this reuse them. */
const OPERATION_COLOURS = 9;

const STATUS_TEXT: Record<StatusClass, string> = {
  '2xx': '2xx success',
  '3xx': '3xx not modified',
  '4xx': '4xx refused',
  '429': '429 over the limit',
  '5xx': '5xx server error',
};

const n = (x: number) => x.toLocaleString('en-GB');
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const hour = (ms: number) => `${new Date(ms).toISOString().slice(0, 13).replace('T', ' ')}:00`;
const share = (b: BudgetPeak) => (b.limit === 0 ? 0 : (100 * b.used) / b.limit);
const budgetText = (b: BudgetPeak) => (b.limit === 0 ? 'not used' : `${n(b.used)} of ${n(b.limit)} (${share(b).toFixed(1)} %)`);

/** The top of the scale: the smallest 1, 2 or 5 × 10^k at or above the highest value. */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(max));
  return ([1, 2, 5, 10].find((m) => m * p >= max) ?? 10) * p;
}

interface Series {
  name: string;
  cls: string;
}

interface BarsProps {
  id: string;
  title: string;
  /** What the chart shows, in words: the image's description. */
  desc: string;
  labels: string[];
  series: Series[];
  /** values[i][s]: bar i, series s. */
  values: number[][];
  /** Side by side instead of stacked (shares, which do not add up). */
  grouped?: boolean;
  unit?: string;
  /** The scale's top when fixed (100 for percentages). */
  max?: number;
}

/** Bars over time, stacked or grouped, with the scale's top and zero, and the first, middle and last labels. */
function Bars(p: BarsProps) {
  const totals = p.values.map((v) => (p.grouped ? Math.max(0, ...v) : v.reduce((a, b) => a + b, 0)));
  const top = p.max ?? niceMax(Math.max(0, ...totals));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const slot = plotW / Math.max(1, p.labels.length);
  const gap = slot > 6 ? Math.min(4, slot * 0.2) : 0;
  const y = (v: number) => PAD.top + plotH - (plotH * v) / top;
  const ticks = p.labels.length > 2 ? [0, Math.floor((p.labels.length - 1) / 2), p.labels.length - 1] : p.labels.map((_, i) => i);
  const unit = p.unit ?? '';
  return (
    <svg class="usage-chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${p.id}-title ${p.id}-desc`} data-chart={p.id}>
      <title id={`${p.id}-title`}>{p.title}</title>
      <desc id={`${p.id}-desc`}>{p.desc}</desc>
      <line class="axis" x1={PAD.left} x2={W - PAD.right} y1={y(0)} y2={y(0)} />
      <line class="grid" x1={PAD.left} x2={W - PAD.right} y1={y(top)} y2={y(top)} />
      <text class="tick" x={PAD.left - 4} y={y(top) + 4} text-anchor="end">
        {`${n(top)}${unit}`}
      </text>
      <text class="tick" x={PAD.left - 4} y={y(0) + 4} text-anchor="end">
        {`0${unit}`}
      </text>
      {ticks.map((i, k) => {
        // The first and last labels end at the plot's edges, so neither is cut off.
        const edge = ticks.length > 1 && k === 0 ? 'start' : ticks.length > 1 && k === ticks.length - 1 ? 'end' : 'middle';
        const x = edge === 'start' ? PAD.left : edge === 'end' ? W - PAD.right : PAD.left + slot * (i + 0.5);
        return (
          <text key={i} class="tick" x={x} y={H - 6} text-anchor={edge}>
            {p.labels[i]}
          </text>
        );
      })}
      {p.values.map((vs, i) => {
        const x0 = PAD.left + slot * i + gap / 2;
        const width = slot - gap;
        let base = 0;
        return (
          <g key={i}>
            {vs.map((v, s) => {
              if (v <= 0) return null;
              const series = p.series[s]!;
              const w = p.grouped ? width / vs.length : width;
              const x = p.grouped ? x0 + w * s : x0;
              const from = p.grouped ? 0 : base;
              base += v;
              const hTop = y(Math.min(top, from + v));
              return (
                <rect key={s} class={series.cls} x={x.toFixed(2)} y={hTop.toFixed(2)} width={Math.max(0.5, w).toFixed(2)} height={(y(from) - hTop).toFixed(2)}>
                  <title>{`${p.labels[i]}: ${series.name} ${p.grouped ? v.toFixed(1) : n(v)}${unit}`}</title>
                </rect>
              );
            })}
          </g>
        );
      })}
    </svg>
  );
}

function Legend({ series }: { series: Series[] }) {
  return (
    <ul class="usage-legend">
      {series.map((s) => (
        <li key={s.name}>
          <svg class="swatch" viewBox="0 0 10 10" aria-hidden="true">
            <rect class={s.cls} width="10" height="10" />
          </svg>
          {s.name}
        </li>
      ))}
    </ul>
  );
}

/** A chart's numbers: one row per day or hour, a header for each column. */
function Numbers({ caption, head, rows }: { caption: string; head: string[]; rows: { label: string; cells: ComponentChildren[] }[] }) {
  return (
    <details class="usage-numbers">
      <summary>The numbers</summary>
      <div class="table-wrap">
        <table class="stack">
          <caption>{caption}</caption>
          <thead>
            <tr>
              {head.map((h) => (
                <th key={h} scope="col">
                  {h}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.label}>
                <th scope="row" data-label={head[0]}>
                  {r.label}
                </th>
                {r.cells.map((c, i) => (
                  <td key={i} data-label={head[i + 1]}>
                    {c}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </details>
  );
}

function busiest(points: UsagePoint[], label: (ms: number) => string): string {
  const top = points.reduce<UsagePoint | null>((a, b) => (b.total > (a?.total ?? 0) ? b : a), null);
  return top ? `; the busiest, ${label(top.start)}, had ${n(top.total)}` : '';
}

export interface UsageChartsProps {
  usage: UsageSeries;
  /** How many of the last hours the hourly chart shows (the series holds every hour of the window). */
  hours?: number;
  /** Prefix for element ids, so two of these may share a page. */
  idPrefix?: string;
}

export function UsageCharts({ usage, hours = 48, idPrefix = 'usage' }: UsageChartsProps) {
  const ops = usage.operations;
  const opSeries = ops.map((name, i) => ({ name, cls: `op-${i % OPERATION_COLOURS}` }));
  const statusSeries = STATUS_CLASSES.map((c) => ({ name: STATUS_TEXT[c], cls: `s-${c}` }));
  const budgetSeries = [
    { name: 'with proof (api_token or signed URL)', cls: 'b-proven' },
    { name: 'with the public key alone', cls: 'b-unproven' },
  ];
  const days = usage.daily;
  const lastHours = usage.hourly.slice(-Math.max(1, Math.min(hours, usage.hourly.length)));
  const span = `the last ${days.length} days (UTC)`;
  const peak = (b: (p: UsagePoint) => BudgetPeak) => Math.max(0, ...days.map((d) => share(b(d))));
  return (
    <div class="usage" data-usage-total={usage.totals.total}>
      {usage.totals.total === 0 ? <p class="empty">No calls in {span}.</p> : null}

      <section aria-labelledby={`${idPrefix}-daily-h`}>
        <h3 id={`${idPrefix}-daily-h`}>Requests per day</h3>
        <Bars
          id={`${idPrefix}-daily`}
          title={`Requests per operation per day, ${span}`}
          desc={`${n(usage.totals.total)} requests in ${span}${busiest(days, day)}. ${ops.map((o) => `${o}: ${n(usage.totals.requests[o] ?? 0)}`).join(', ')}.`}
          labels={days.map((d) => day(d.start))}
          series={opSeries}
          values={days.map((d) => ops.map((o) => d.requests[o] ?? 0))}
        />
        <Legend series={opSeries} />
        <Numbers
          caption={`Requests per operation per day, ${span}`}
          head={['Day', ...ops, 'All']}
          rows={days.map((d) => ({ label: day(d.start), cells: [...ops.map((o) => n(d.requests[o] ?? 0)), n(d.total)] }))}
        />
      </section>

      <section aria-labelledby={`${idPrefix}-hourly-h`}>
        <h3 id={`${idPrefix}-hourly-h`}>Requests per hour</h3>
        <Bars
          id={`${idPrefix}-hourly`}
          title={`Requests per operation per hour, the last ${lastHours.length} hours (UTC)`}
          desc={`${n(lastHours.reduce((a, h) => a + h.total, 0))} requests in the last ${lastHours.length} hours${busiest(lastHours, hour)}.`}
          labels={lastHours.map((h) => hour(h.start))}
          series={opSeries}
          values={lastHours.map((h) => ops.map((o) => h.requests[o] ?? 0))}
        />
        <Numbers
          caption={`Requests per operation per hour, the last ${lastHours.length} hours (UTC)`}
          head={['Hour', ...ops, 'All']}
          rows={lastHours.map((h) => ({ label: hour(h.start), cells: [...ops.map((o) => n(h.requests[o] ?? 0)), n(h.total)] }))}
        />
      </section>

      <section aria-labelledby={`${idPrefix}-status-h`}>
        <h3 id={`${idPrefix}-status-h`}>Answers by status</h3>
        <Bars
          id={`${idPrefix}-status`}
          title={`Answers by status per day, ${span}`}
          desc={`${STATUS_CLASSES.map((c) => `${STATUS_TEXT[c]}: ${n(usage.totals.statuses[c])}`).join(', ')}.`}
          labels={days.map((d) => day(d.start))}
          series={statusSeries}
          values={days.map((d) => STATUS_CLASSES.map((c) => d.statuses[c]))}
        />
        <Legend series={statusSeries} />
        <Numbers
          caption={`Answers by status per day, ${span}`}
          head={['Day', ...STATUS_CLASSES]}
          rows={days.map((d) => ({ label: day(d.start), cells: STATUS_CLASSES.map((c) => n(d.statuses[c])) }))}
        />
      </section>

      <section aria-labelledby={`${idPrefix}-budget-h`}>
        <h3 id={`${idPrefix}-budget-h`}>Rate-limit budget in use</h3>
        <p class="hint">The most of each per-minute budget used in one minute of the day.</p>
        <Bars
          id={`${idPrefix}-budget`}
          title={`Peak share of each rate-limit budget per day, ${span}`}
          desc={`At most ${peak((d) => d.proven).toFixed(1)} % of the budget for calls with proof and ${peak((d) => d.unproven).toFixed(1)} % of the budget for calls with the public key alone.`}
          labels={days.map((d) => day(d.start))}
          series={budgetSeries}
          values={days.map((d) => [share(d.proven), share(d.unproven)])}
          grouped
          unit=" %"
          max={100}
        />
        <Legend series={budgetSeries} />
        <Numbers
          caption={`Peak use of each rate-limit budget per day, ${span}`}
          head={['Day', 'With proof', 'Public key alone']}
          rows={days.map((d) => ({ label: day(d.start), cells: [budgetText(d.proven), budgetText(d.unproven)] }))}
        />
      </section>
    </div>
  );
}
