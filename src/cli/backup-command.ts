// `idsvc backup FILE`: a consistent copy of a SQLite database while the server runs. PostgreSQL has
// its own tool for that (pg_dump), and the command says how to use it instead of half-doing it.
import { loadConfig } from '../config.js';
import { backupSqlite } from '../db/backup.js';
import { CliError, fail, print, type Out } from './output.js';

function pgDumpAdvice(file: string, schema: string | null): string {
  // The URL is named, never printed: it may hold a password.
  const schemaOption = schema ? ` --schema=${schema}` : '';
  return [
    'this database is PostgreSQL: back it up with pg_dump, which takes a consistent snapshot while idsvc serves:',
    `  pg_dump --format=custom${schemaOption} --file=${JSON.stringify(file)} --dbname="$DATABASE_URL"`,
    'and restore it into an empty database, with idsvc stopped:',
    `  pg_restore --no-owner --dbname="$DATABASE_URL" ${JSON.stringify(file)}`,
    '(docs/deploy.md, "Backups")',
  ].join('\n');
}

/** `idsvc backup FILE` (declared in program.ts, which loads this module only to run it). */
export async function runBackup(out: Out, file: string): Promise<void> {
  try {
    const config = loadConfig(out.env);
    if (!config.databaseUrl.startsWith('sqlite:')) throw new CliError(pgDumpAdvice(file, config.databaseSchema));
    const source = config.databaseUrl.slice('sqlite:'.length);
    if (source === ':memory:') throw new CliError('DATABASE_URL is sqlite::memory:, which lives only inside its process: there is nothing on disk to back up');
    const result = await backupSqlite(source, file);
    print(out, result, () => `backup written to ${result.file} (${result.bytes} bytes, integrity ${result.integrity})`);
  } catch (err) {
    fail(out, err instanceof Error ? err.message : String(err));
  }
}
