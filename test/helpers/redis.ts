// The Redis database each test file that uses Redis works in: one per file and per test database,
// so files running side by side, and the SQLite and PostgreSQL suites when run at once,
// never count in each other's keys or flush each other's counters. Databases 0, 9–12 and 15 are free.
import { TEST_DB } from './app.js';

const DATABASES = {
  'redis-limits': [1, 2],
  'sync-user': [3, 4],
  'key-budgets': [5, 6],
  'redis-outage': [7, 8],
  'read-limits': [13, 14],
} as const;

export function testRedisUrl(file: keyof typeof DATABASES): string {
  const server = (process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379').replace(/\/\d*$/, '');
  return `${server}/${DATABASES[file][TEST_DB === 'postgres' ? 1 : 0]}`;
}
