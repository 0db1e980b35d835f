import { writeFileSync } from 'node:fs';
import { buildOpenApi } from './openapi';
import { allRoutes } from './app';

// `npm run openapi`: writes docs/openapi.json from the route declarations (CI checks it is current).
const doc = buildOpenApi(allRoutes(), 'docs');
writeFileSync(new URL('../../../docs/openapi.json', import.meta.url), JSON.stringify(doc, null, 2) + '\n');
console.log(`docs/openapi.json: ${Object.keys(doc.paths).length} paths`);
