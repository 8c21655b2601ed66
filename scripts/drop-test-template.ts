// Run by scripts/test.sh when a PostgreSQL suite ends: drops the template schema its files copied
// their databases from (test/helpers/template-db.ts).
import { PG_URL } from '../test/helpers/app.js';
import { dropPgTemplate } from '../test/helpers/template-db.js';

const dir = process.env.IDSVC_TEST_TEMPLATE_DIR;
if (dir) await dropPgTemplate(PG_URL, dir);
