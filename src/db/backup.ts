// `idsvc backup FILE` on SQLite: SQLite's online backup, taken through a connection of its own while
// the server goes on serving and writing (WAL lets it read a consistent state beside the writer).
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';

export interface BackupResult {
  file: string;
  bytes: number;
  integrity: string;
}

/**
 * Copies the database at `sourceFile` into `targetFile` (mode 0600), checks the copy with
 * `PRAGMA integrity_check`, and only then gives it its name: a backup that stopped halfway or
 * failed the check never stands where a good one is expected.
 */
export async function backupSqlite(sourceFile: string, targetFile: string): Promise<BackupResult> {
  if (!fs.existsSync(sourceFile)) throw new Error(`there is no database at ${sourceFile}`);
  const target = path.resolve(targetFile);
  if (fs.existsSync(target)) throw new Error(`${target} exists already; choose a new name (backups are never overwritten)`);
  const partial = `${target}.partial-${process.pid}`;
  // Created empty and private before SQLite writes into it: a backup holds what the database holds.
  fs.closeSync(fs.openSync(partial, 'wx', 0o600));
  const source = new SQLite(sourceFile, { readonly: true, fileMustExist: true });
  try {
    source.pragma('busy_timeout = 5000');
    // The first step copies 100 pages, then the rest in one step: SQLite restarts a backup whose
    // source another connection changed between steps, and a busy server changes it all the time.
    await source.backup(partial, { progress: () => Number.MAX_SAFE_INTEGER });
  } catch (err) {
    fs.rmSync(partial, { force: true });
    throw err;
  } finally {
    source.close();
  }
  const copy = new SQLite(partial, { fileMustExist: true });
  let integrity: string;
  try {
    integrity = (copy.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join('; ');
    // The copy is a whole database on its own: no write-ahead log beside it to be carried along.
    copy.pragma('journal_mode = DELETE');
  } finally {
    copy.close();
  }
  if (integrity !== 'ok') {
    fs.rmSync(partial, { force: true });
    throw new Error(`the copy failed SQLite's integrity check (${integrity}); nothing was written to ${target}`);
  }
  fs.renameSync(partial, target);
  return { file: target, bytes: fs.statSync(target).size, integrity };
}
